"""A week of real runs for the site's tests, made through the record's use cases (schedule, start, record steps,
finish) with screenshots and element lists in the real blob store, then published. No mocks.

Models: `model-alpha` passes everything; `model-beta` and `model-gamma` stop at the same five stations (a shared
place); `model-delta` never gets through the control store (unranked). A private test of `org-secret-model`
(organisation acme) leaves marks that must never appear on a public page.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID

import msgspec
import psycopg

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.actions import Click, Stop
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.agent.verdicts import OrderLine, OrderSummary, Verdict
from domain.courses.course import load_course
from domain.eventlog.commands import PublishWeek, ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.publishing import publish_week
from domain.week.weeks import week_of

COURSE = load_course()
SCREENSHOT = base64.b64decode(
    "/9j/4AAQSkZJRgABAgAAAQABAAD//gAQTGF2YzU5LjM3LjEwMAD/2wBDAAgUFBcUFxsbGxsbGyAeICEhISAgICAhISEkJCQqKiok"
    "JCQhISQkKCgqKi4vLisrKisvLzIyMjw8OTlGRkhWVmf/xABMAAEBAAAAAAAAAAAAAAAAAAAABgEBAQAAAAAAAAAAAAAAAAAAAAYQ"
    "AQAAAAAAAAAAAAAAAAAAAAARAQAAAAAAAAAAAAAAAAAAAAD/wAARCABkAKADASIAAhEAAxEA/9oADAMBAAIRAxEAPwCAAVKYAAAA"
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAf/2Q=="
)
PRIVATE_MODEL = "org-secret-model"
PRIVATE_NOTE = "PRIVATE-ACME-NOTE"
STOPS = ("s03", "s05", "s07", "s13", "s16")
"""Where model-beta and model-gamma stop."""
ADMIN_URL = os.environ.get("CANITBUY_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
SITE_SECRET = "test secret " * 4


@dataclass
class SiteWeek:
    week: str
    runs: dict[tuple[str, str], UUID] = field(default_factory=dict)
    private_run: UUID | None = None
    private_blob: str = ""


def elements_blob(runtime: Runtime, marker: str = "") -> str:
    items = [
        {"id": "e1", "role": "link", "name": f"Aero Run 2{marker}", "href": "/p/aero-run-2"},
        {"id": "e2", "role": "button", "name": "Add to cart", "disabled": False},
    ]
    return runtime.blobs.put(json.dumps(items).encode())


def _verdict(model: str, station: str) -> Verdict:
    spec = COURSE.station(station)
    fails = (model == "model-delta" and station == "s01") or (
        model in ("model-beta", "model-gamma") and station in STOPS)
    if fails:
        outcome = "verification_page" if station == "s13" else "broke_brief" if spec.is_trap else "stopped"
        return Verdict(passed=False, outcome=outcome, stage=spec.stage, step=2,
                       reason=f"The agent did not get past {spec.name.lower()}.",
                       broke=["something_else"] if outcome == "broke_brief" else [],
                       order=_order(extra=True) if spec.is_trap else None)
    if spec.is_reading:
        return Verdict(passed=True, outcome="passed", stage=spec.stage, step=2, reason="5 of 5 facts right.",
                       facts_right=5)
    return Verdict(passed=True, outcome="passed", stage=spec.stage, step=2, reason="The checkout's form opened.",
                   order=_order(extra=False) if spec.is_trap else None,
                   remarks=["consent_all"] if (model, station) == ("model-alpha", "s02") else [])


def _order(extra: bool) -> OrderSummary:
    items = [OrderLine(kind="shoes", product="aero-run-2", name="Aero Run 2", size="EU 42", unit_price_cents=13900)]
    if extra:
        items.append(OrderLine(kind="extra", product="care-kit", name="Care kit", unit_price_cents=1200))
    return OrderSummary(items=items, delivery_cents=999, total_cents=13900 + 999 + (1200 if extra else 0))


def run_one(runtime: Runtime, model: str, station: str, week: str, org: str | None = None,
            note: str = "I pick the first product.") -> UUID:
    record = runtime.record
    command = ScheduleRun.on_course(station=station, model=model, requested_by="test", week=week)
    if org is None:
        [run_id] = schedule_runs(record, [command])
    else:  # a private run of an organisation the tests register later through the desk: written as history
        private = Run.schedule(**msgspec.structs.asdict(msgspec.structs.replace(command, org=org)), at=record.clock())
        record.save(private)
        run_id = private.id
    record.start_run(run_id, worker="test", browser_version="chromium-test", agent_version="test")
    shot = runtime.blobs.put(SCREENSHOT + (org or "").encode())
    steps = [
        StepRecord(number=1, url=f"https://{station}.lab.canitbuy.com/", title="NORDLYS", screenshot=shot,
                   elements=elements_blob(runtime, org or ""), notes=note, action=Click(id="e1"), result="ok",
                   duration_ms=900, model_ms=600, tokens_in=1200, tokens_out=40, cost_usd=0.0004),
        StepRecord(number=2, url=f"https://{station}.lab.canitbuy.com/checkout", title="Checkout", screenshot=shot,
                   elements=elements_blob(runtime, org or ""), notes="I am at the checkout.",
                   action=Stop(reason="done"), result="ok", duration_ms=700, model_ms=500, tokens_in=1300,
                   tokens_out=20, cost_usd=0.0003),
    ]
    record.record_steps(run_id, steps)
    record.finish_run(run_id, _verdict(model, station), steps=2, seconds=1.6)
    return run_id


def make_week(runtime: Runtime, models: tuple[str, ...] = ("model-alpha", "model-beta", "model-gamma", "model-delta"),
              publish: bool = True) -> SiteWeek:
    week = week_of(runtime.record.clock())
    made = SiteWeek(week=week)
    for model in models:
        for station in COURSE.codes:
            made.runs[(model, station)] = run_one(runtime, model, station, week)
    made.private_run = run_one(runtime, PRIVATE_MODEL, "s02", week, org="acme", note=PRIVATE_NOTE)
    made.private_blob = runtime.blobs.put(SCREENSHOT + b"acme")
    if publish:
        publish_week(runtime.record, runtime.readmodels, PublishWeek(week=week, by="test@canitbuy.com"))
    return made


def behind_local_proxy_with_a_week(data_dir: Path) -> tuple[Settings, str]:
    """The settings of a site that believes a proxy on this machine, over a record holding one made and published
    week (returned too)."""
    settings = Settings(data_dir=data_dir, site_secret="site test secret " * 3, trusted_proxies=("127.0.0.1/32",))
    with build_runtime(settings) as runtime:
        return settings, make_week(runtime).week


@contextmanager
def fresh_database(prefix: str) -> Iterator[str]:
    """The address of a fresh PostgreSQL database (`prefix`_ and 12 hex digits), dropped once the block ends."""
    database = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    try:
        yield f"{ADMIN_URL.rpartition('/')[0]}/{database}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


@contextmanager
def site_settings(backend: str, data_dir: Path, prefix: str) -> Iterator[Settings]:
    """The settings of a site on `backend`, for the module fixtures parametrised with "sqlite" and "postgres":
    the record in `data_dir`, or in a fresh_database(prefix)."""
    if backend == "sqlite":
        yield Settings(data_dir=data_dir, site_secret=SITE_SECRET)
        return
    with fresh_database(prefix) as url:
        yield Settings(data_dir=data_dir, database_url=url, site_secret=SITE_SECRET)
