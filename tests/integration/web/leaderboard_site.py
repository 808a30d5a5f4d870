"""A site with no runs, for the leaderboard submission service, and valid runs to submit to it."""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from desk_client import AUDITOR, STAFF
from site_data import fresh_database

from adapters.settings import Settings
from adapters.sqldb import SqlDb
from adapters.staff_accounts import StaffAccounts
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

OUTCOMES = ["added_to_cart"] * 6 + ["checkout_reached", "no_cart", "blocked", "no_cart", "error", "not_attempted"]
CONTACT = "private-contact@agent.test"


def a_run(notes: str, outcomes: list[str] | None = None) -> dict[str, Any]:
    """A valid run; runs with other notes differ by version too (ARC's fingerprint is agent and outcomes)."""
    outcomes = outcomes or OUTCOMES
    started = datetime.now(UTC) - timedelta(hours=2)
    return {
        "spec": "arc-leaderboard-submission/v1",
        "test_set": "ARC-100 v1",
        "agent": {"name": "Nordic Shopper", "version": notes[:40], "builder": "Nordic Labs", "path": "browser",
                  "url": "https://agent.test/", "model": "shopper-7b"},
        "run": {"stopped_before_payment": True, "started_at": _iso(started), "notes": notes},
        "results": [
            {"id": f"arc100-v1-{i + 1:03d}", "outcome": o, "at": _iso(started + timedelta(minutes=5)),
             "evidence_url": f"https://runs.agent.test/{i + 1}.png"}
            for i, o in enumerate(outcomes)
        ],
        "contact": CONTACT,
    }


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def body(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode()


def spec_example() -> dict[str, Any]:
    data = copy.deepcopy(a_run("example"))
    data["agent"]["name"], data["agent"]["builder"] = "Example Shopper", "Example Labs"
    return data


def _as_json(request: Any) -> None:
    """A body sent without a type goes as JSON: the service takes JSON sent as JSON only (issue 18, item 12)."""
    if request.method == "POST" and "content-type" not in request.headers:
        request.headers["content-type"] = "application/json"


def json_by_default(client: TestClient) -> TestClient:
    client.event_hooks = {"request": [_as_json], "response": []}
    return client


@contextmanager
def leaderboard_site(settings: Settings) -> Iterator[TestClient]:
    settings = Settings(data_dir=settings.data_dir, database_url=settings.database_url,
                        site_secret="test secret " * 4, lab_url=settings.lab_url)
    accounts = StaffAccounts(SqlDb(settings))
    accounts.db.migrate()
    accounts.add(*STAFF, role="staff")
    accounts.add(*AUDITOR, role="auditor")
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        yield json_by_default(client)


def from_network(client: TestClient, address: str) -> TestClient:
    """Another client of the same running app, sending from `address` (its lifespan already ran)."""
    return json_by_default(TestClient(client.app, base_url="https://testserver", client=(address, 40000)))


def site_on_backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                    lab_url: str | None = None) -> Iterator[TestClient]:
    """The body of a module fixture parametrised with sqlite and postgres: a fresh site on that backend (whose
    receipts are checked against the lab at `lab_url`, when given)."""
    data_dir = tmp_path_factory.mktemp("board") / "var"
    if request.param == "sqlite":
        with leaderboard_site(Settings(data_dir=data_dir, lab_url=lab_url)) as site_client:
            yield site_client
        return
    with (fresh_database("canitbuy_board") as url,
          leaderboard_site(Settings(data_dir=data_dir, database_url=url, lab_url=lab_url)) as site_client):
        yield site_client
