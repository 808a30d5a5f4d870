"""The read models' query of the models that ran in a week gives what the domain's fold gives, on SQLite and
PostgreSQL: a run counts for the week it started in, one not started yet for the week it was scheduled for, and a
private test for none."""

from __future__ import annotations

import pytest
from record_builders import WEEK, StepClock, into_week, write_week

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.publishing import replay

NEXT = "2026-W49"


@pytest.fixture
def record(settings):
    record = open_record(settings, clock=StepClock())
    yield record
    record.close()


@pytest.fixture
def readmodels(settings, record):
    return ReadModels(settings, record, page_size=50)


def test_the_read_models_query_gives_the_models_the_fold_gives(record, readmodels):
    write_week(record, {"a": 17, "b": 9})
    _, moved = schedule_runs(record, [
        ScheduleRun.on_course(station="s01", model=m, week=WEEK, requested_by="t") for m in ("waiting", "moved")])
    into_week(record, NEXT)
    record.start_run(moved, worker="w", browser_version="b", agent_version="a")  # it counts for NEXT now
    write_week(record, {"c": 2}, week=NEXT)
    write_week(record, {"own": 1}, week=NEXT, org="acme")
    readmodels.catch_up()
    folded = replay(record.read_log)
    for week in (WEEK, NEXT, "2026-W47"):
        assert readmodels.models_with_runs(week) == folded.models_with_runs(week)
    assert readmodels.models_with_runs(WEEK) == ["a", "b", "waiting"]
    assert readmodels.models_with_runs(NEXT) == ["c", "moved"]
