"""k per model from the line-up: `canitbuy week run` without --repeats (and the Monday schedule) run each
entrant as many times a station as staff set it; --repeats overrides it for every model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.lineup import Entrant
from ops.cli import build_parser
from workers.ledger import RunLedger
from workers.plan import course_cells, schedule_course
from workers.schedule import catch_up, week_repeats

WEEK = "2026-W49"
MONDAY_MORNING = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    with build_runtime(settings) as rt:
        rt.record.set_entrants([
            Entrant(model="baseline-robust", label="Robust", route="builtin", since=date(2026, 1, 1), repeats=3),
            Entrant(model="baseline-naive", label="Naive", route="builtin", since=date(2026, 1, 1)),
        ], by="staff@canitbuy.com")
        yield rt


def per_model(runtime: Runtime) -> Counter[tuple[str, int]]:
    runs = RunLedger(runtime.record).refresh().runs.values()
    return Counter((r.model, r.repeat) for r in runs)


def test_week_run_takes_repeats_from_the_line_up_unless_given() -> None:
    parser = build_parser()
    assert parser.parse_args(["week", "run"]).repeats is None
    assert parser.parse_args(["week", "run", "--repeats", "2"]).repeats == 2


def test_each_entrant_runs_its_own_repeats_and_others_once(runtime: Runtime) -> None:
    repeats = week_repeats(runtime, WEEK)
    assert repeats == {"baseline-naive": 1, "baseline-robust": 3}
    models = ["baseline-robust", "baseline-naive", "baseline-plain"]
    schedule_course(runtime, WEEK, models, repeats=repeats, requested_by="cli")
    counts = per_model(runtime)
    assert {k: v for k, v in counts.items() if k[0] == "baseline-robust"} == {
        ("baseline-robust", 0): 18, ("baseline-robust", 1): 18, ("baseline-robust", 2): 18}
    assert counts[("baseline-naive", 0)] == 18 and ("baseline-naive", 1) not in counts
    assert counts[("baseline-plain", 0)] == 18 and ("baseline-plain", 1) not in counts
    assert course_cells(models, 2)[0].repeat == 0 and len(course_cells(models, 2)) == 108, "--repeats for all"


def test_the_monday_schedule_uses_the_line_up_repeats(runtime: Runtime) -> None:
    done = catch_up(runtime, RunLedger(runtime.record), MONDAY_MORNING, models=["baseline-robust", "baseline-naive"],
                    publish=None, repeats=week_repeats(runtime, WEEK))
    assert len(done.lineup) == 18 * 3 + 18
    assert sorted({r for m, r in per_model(runtime) if m == "baseline-robust"}) == [0, 1, 2]
