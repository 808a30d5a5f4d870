"""One fold of a run's events: the read models' projection, the workers' ledger and a run's recording all read
the same facts, folded by the same code (issue #12, item 1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.ports import StepRecord
from domain.agent.verdicts import Verdict
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.projections.facts import RunFact
from domain.projections.fold import LogState
from domain.week.weeks import week_of
from web.public.recording import load_recording
from workers.ledger import RunLedger


@pytest.fixture
def runtime(sqlite_settings: Settings) -> Iterator[Runtime]:
    with build_runtime(sqlite_settings) as rt:
        yield rt


def steps(n: int) -> list[StepRecord]:
    return [StepRecord(number=i, url=f"http://lab/{i}") for i in range(1, n + 1)]


def test_the_ledger_the_projection_and_the_recording_read_one_fold(runtime: Runtime) -> None:
    record = runtime.record
    week = week_of(record.clock())
    ids = schedule_runs(record, [ScheduleRun(station=s, model="m", course_version="2.1", week=week, kind="browser",
                                             requested_by="cli") for s in ("s01", "s02", "s03", "s04")])
    finished, cut, running, _scheduled = ids
    for run_id in (finished, cut, running):
        record.start_run(run_id, worker="w1", browser_version="chromium 1", agent_version="a 2", agent_release=3)
    record.record_steps(finished, steps(3))
    record.finish_run(finished, Verdict(passed=True, outcome="passed", stage="order", step=3), steps=3,
                      seconds=2.25)
    record.record_steps(cut, steps(2))
    record.cut_short_run(cut, "model_connection", "the model did not answer", steps=2, seconds=1.5)
    record.record_steps(running, steps(1))

    ledger = RunLedger(record).refresh()
    projection = LogState()
    projection.fold(record.read_log(after=0, limit=10_000))
    assert all(isinstance(fact, RunFact) for fact in ledger.runs.values())
    assert ledger.runs == projection.runs, "the workers see the runs exactly as the read models fold them"

    for run_id in ids:
        fact, summary = ledger.runs[str(run_id)], load_recording(record, run_id).run
        assert (summary.status, summary.started_at, summary.ended_at, summary.seconds) == (
            fact.status, fact.started_at, fact.ended_at, fact.seconds)
        assert (summary.agent_version, summary.agent_release, summary.cut_short_detail) == (
            fact.agent_version, fact.agent_release, fact.cut_short_detail)
        assert summary.steps == fact.steps
    assert ledger.runs[str(cut)].cut_short_detail == "the model did not answer"
    assert ledger.runs[str(finished)].passed is True and ledger.runs[str(running)].steps == 1
    assert [r.run_id for r in ledger.open_runs()] == [str(ids[3])]
