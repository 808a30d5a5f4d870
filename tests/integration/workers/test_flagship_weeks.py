"""Flagship weeks: the flagship line-up runs beside the weekly one on the first Monday of a month, under its own
spending cap, and its runs appear in that week's ranking and Matrix by the same rules, labelled as flagship."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from uuid import UUID

import anyio
import msgspec
import pytest

from adapters.models.lineup import FLAGSHIP, WEEKLY, estimated_run_usd, is_flagship
from adapters.readmodels import ReadModels
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.ports import StepRecord
from domain.agent.verdicts import Verdict
from domain.projections.spend import SpendFold
from workers.executor import spend_hold
from workers.leases import open_leases
from workers.ledger import RunLedger
from workers.plan import course_cells
from workers.resources import build_resources
from workers.schedule import catch_up, flagship_week, week_flagships

FIRST_MONDAY = datetime(2026, 12, 7, 7, 0, tzinfo=UTC)  # 2026-W50: the first Monday of December
FLAGSHIP_WEEK, ORDINARY_WEEK = "2026-W50", "2026-W49"  # W49's Monday is 30 November
LUNA, GPT6 = WEEKLY[0].model, FLAGSHIP[0].model


@pytest.fixture
def keyed(settings: Settings) -> Settings:
    return msgspec.structs.replace(settings, model_api_key="sk-test", weekly_cap_usd=0.01, flagship_cap_usd=5.0)


@pytest.fixture
def runtime(keyed: Settings) -> Iterator[Runtime]:
    with build_runtime(keyed, lambda: FIRST_MONDAY) as rt:
        yield rt


def test_the_flagship_line_up_runs_on_the_first_monday_of_a_month_labelled_and_under_its_own_cap(
        runtime: Runtime, keyed: Settings) -> None:
    assert flagship_week(FLAGSHIP_WEEK) and not flagship_week(ORDINARY_WEEK)
    assert week_flagships(runtime, ORDINARY_WEEK) == []
    flagships = week_flagships(runtime, FLAGSHIP_WEEK)
    assert flagships == [e.model for e in FLAGSHIP]

    ledger = RunLedger(runtime.record)
    done = catch_up(runtime, ledger, FIRST_MONDAY, models=[LUNA], flagships=flagships, publish=None)
    assert len(done.lineup) == len(course_cells([LUNA, *flagships]))
    ledger.refresh()
    assert {r.model for r in ledger.runs.values()} == {LUNA, *flagships}

    # The same rules: a finished flagship run is scored in the week's documents, labelled as flagship.
    record = runtime.record
    by_cell = {(r.model, r.station): UUID(r.run_id) for r in ledger.runs.values()}
    for model, cost in ((GPT6, 0.5), (LUNA, 0.02)):
        run_id = by_cell[(model, "s01")]
        record.start_run(run_id, worker="test", browser_version="-", agent_version=model)
        record.record_steps(run_id, [StepRecord(number=1, url="http://s01.lab.localhost/", cost_usd=cost)])
        record.finish_run(run_id, Verdict(passed=True, outcome="passed"), steps=1, seconds=2.0)
    readmodels = ReadModels(runtime.settings, record)
    readmodels.migrate()
    readmodels.catch_up()
    ranking = json.loads(readmodels.ranking_bytes(FLAGSHIP_WEEK))
    labels = {e["model"]: e["label"] for e in ranking["entries"]}
    assert labels[GPT6] == "GPT-6 (flagship)" and "flagship" not in labels[LUNA]
    assert "GPT-6 (flagship)" in readmodels.matrix_bytes(FLAGSHIP_WEEK).decode()

    # Each line-up is held by its own cap: the weekly models have spent past theirs, the flagships have not.
    res = build_resources(runtime, open_leases(keyed), lab_url="http://127.0.0.1:9", directory_url=None)
    ctx: dict[str, object] = {"resources": res}
    weekly_held = anyio.run(spend_hold, ctx, res, record.get_run(by_cell[(LUNA, "s02")]))
    assert weekly_held == "weekly spending cap reached ($0.02 of $0.01)"
    assert anyio.run(spend_hold, ctx, res, record.get_run(by_cell[(GPT6, "s02")])) is None
    fold = SpendFold.empty()
    fold.apply(record.read_log(limit=100_000))
    spend = fold.week(FLAGSHIP_WEEK, cap_usd=0.01, estimate=estimated_run_usd, flagship=is_flagship,
                      flagship_cap_usd=5.0)
    assert (spend.actual_usd, spend.flagship_actual_usd) == (0.02, 0.5)
    assert spend.cap_reached and not spend.flagship_cap_reached
    assert spend.flagship_projected_usd > 0.5 and all(m.flagship == is_flagship(m.model) for m in spend.models)
