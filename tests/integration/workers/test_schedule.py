"""The schedule: the line-up Monday 06:00 UTC, repeats of cut-short runs Monday 14:00, then publication;
caught up after downtime and never doubled."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from uuid import UUID

import pytest

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.verdicts import Verdict
from workers.ledger import RunLedger
from workers.plan import Cell, course_cells, run_id_for, schedule_course
from workers.schedule import catch_up, publish

MODELS = ["baseline-robust", "baseline-naive"]
SUNDAY = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)            # 2026-W48
MONDAY_EARLY = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)       # 2026-W49, before the line-up
MONDAY_MORNING = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
MONDAY_AFTERNOON = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    with build_runtime(settings) as rt:
        yield rt


def scheduled_events(runtime: Runtime) -> list[str]:
    return [e.originator_id for e in runtime.record.read_log(limit=100_000) if e.name == "Run.Scheduled"]


def finish(runtime: Runtime, run_id: UUID, passed: bool = True) -> None:
    runtime.record.start_run(run_id, worker="test", browser_version="-", agent_version="-")
    runtime.record.finish_run(run_id, Verdict(passed=passed, outcome="passed" if passed else "stopped"),
                              steps=1, seconds=1.0)


def cut_short(runtime: Runtime, run_id: UUID) -> None:
    runtime.record.start_run(run_id, worker="test", browser_version="-", agent_version="-")
    runtime.record.cut_short_run(run_id, "our_error", "worker lost", steps=1)


def test_the_control_runs_first_for_each_model() -> None:
    cells = course_cells(MODELS)
    assert [c.station for c in cells[:2]] == ["s01", "s01"]
    assert len(cells) == 36 and "s01" not in {c.station for c in cells[2:]}


def test_running_the_weekly_job_twice_schedules_each_run_once(runtime: Runtime) -> None:
    first = catch_up(runtime, RunLedger(runtime.record), MONDAY_MORNING, models=MODELS, publish=None)
    again = catch_up(runtime, RunLedger(runtime.record), MONDAY_MORNING, models=MODELS, publish=None)
    assert len(first.lineup) == 36 and first.lineup == again.lineup
    assert len(scheduled_events(runtime)) == 36
    assert {r.week for r in RunLedger(runtime.record).refresh().runs.values()} == {"2026-W49"}


def test_nothing_is_scheduled_before_monday_six(runtime: Runtime) -> None:
    done = catch_up(runtime, RunLedger(runtime.record), MONDAY_EARLY, models=MODELS, publish=None)
    assert done.lineup == [] and scheduled_events(runtime) == []


def test_two_schedulers_racing_store_each_run_once(settings: Settings) -> None:
    errors: list[BaseException] = []
    runtimes = [build_runtime(settings) for _ in range(3)]  # three scheduler processes, already started
    start = threading.Barrier(3)

    def schedule(rt: Runtime) -> None:
        start.wait()
        try:
            schedule_course(rt, "2026-W49", MODELS, requested_by="scheduler")
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=schedule, args=(rt,)) for rt in runtimes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for rt in runtimes:
        rt.close()
    assert errors == []
    with build_runtime(settings) as rt:
        events = scheduled_events(rt)
    assert len(events) == len(set(events)) == 36


def test_monday_afternoon_repeats_last_weeks_cut_short_runs_once(runtime: Runtime) -> None:
    ids = schedule_course(runtime, "2026-W48", ["baseline-robust"], requested_by="scheduler", stations=["s01", "s13"])
    finish(runtime, ids[0])
    cut_short(runtime, ids[1])
    ledger = RunLedger(runtime.record)
    morning = catch_up(runtime, ledger, MONDAY_MORNING, models=[], publish=None)
    assert morning.repeats == []
    afternoon = catch_up(runtime, ledger, MONDAY_AFTERNOON, models=[], publish=None)
    again = catch_up(runtime, ledger, MONDAY_AFTERNOON, models=[], publish=None)

    assert afternoon.repeats == [run_id_for("2026-W48", Cell("baseline-robust", "s13"), 2)]
    assert again.repeats == [] and len(scheduled_events(runtime)) == 3
    repeat = runtime.record.get_run(afternoon.repeats[0])
    assert (repeat.week, repeat.attempt, repeat.station) == ("2026-W48", 2, "s13")
    cut_short(runtime, repeat.id)
    later = catch_up(runtime, ledger, MONDAY_AFTERNOON, models=[], publish=None)
    assert later.repeats == [], "one repeat a cell; still missing, the cell stays empty"


def test_the_previous_week_is_published_once_its_repeats_are_over(runtime: Runtime) -> None:
    ids = schedule_course(runtime, "2026-W48", ["baseline-robust"], requested_by="scheduler", stations=["s01"])
    ledger = RunLedger(runtime.record)
    cut_short(runtime, ids[0])
    first = catch_up(runtime, ledger, MONDAY_AFTERNOON, models=[], publish=publish)
    assert first.published == [], "the repeat is still open"
    finish(runtime, first.repeats[0])
    second = catch_up(runtime, ledger, MONDAY_AFTERNOON, models=[], publish=publish)
    third = catch_up(runtime, ledger, MONDAY_AFTERNOON, models=[], publish=publish)
    assert second.published == ["2026-W48"] and third.published == []
    assert len(runtime.record.week_record("2026-W48").publications) == 1


def test_a_week_missed_during_downtime_is_still_published(runtime: Runtime) -> None:
    ids = schedule_course(runtime, "2026-W47", ["baseline-robust"], requested_by="scheduler", stations=["s01"])
    finish(runtime, ids[0])
    done = catch_up(runtime, RunLedger(runtime.record), MONDAY_MORNING, models=[], publish=publish)
    assert done.published == ["2026-W47"]
    assert SUNDAY < MONDAY_MORNING
