"""The schedule, driven by an injected clock: the line-up Monday 06:00 UTC, repeats of that Monday's cut-short runs
from 14:00, publication once the week is over; caught up after downtime and never doubled. A run counts for the
week in which it starts."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime

from adapters.readmodels import ReadModels
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.verdicts import Verdict
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from tests.integration.workers.clocked import MONDAY_MORNING, Clock, cut_short, finish
from workers.ledger import RunLedger
from workers.plan import Cell, course_cells, run_id_for, schedule_course
from workers.schedule import CatchUp, catch_up, publish

MODELS = ["baseline-robust", "baseline-naive"]
SUNDAY = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)            # 2026-W48
SUNDAY_NIGHT = datetime(2026, 11, 29, 23, 59, tzinfo=UTC)     # 2026-W48, its last minute
MONDAY_EARLY = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)       # 2026-W49, before the line-up
MONDAY_AFTERNOON = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)
WEDNESDAY = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
NEXT_MONDAY = datetime(2026, 12, 7, 7, 0, tzinfo=UTC)         # 2026-W50


def scheduled_events(runtime: Runtime) -> list[str]:
    return [e.originator_id for e in runtime.record.read_log(limit=100_000) if e.name == "Run.Scheduled"]


def tick(runtime: Runtime, ledger: RunLedger, models: list[str] | None = None, publishing: bool = True) -> CatchUp:
    """What the cron does at the clock's time."""
    return catch_up(runtime, ledger, runtime.record.clock(), models=models or [],
                    publish=publish if publishing else None)


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


def test_monday_afternoon_repeats_this_mondays_cut_short_runs_once(runtime: Runtime, clock: Clock) -> None:
    ledger = RunLedger(runtime.record)
    ids = tick(runtime, ledger, ["baseline-robust"]).lineup  # Monday morning: the line-up of 2026-W49
    finish(runtime, ids[0])
    cut_short(runtime, ids[1])
    assert tick(runtime, ledger).repeats == [], "repeats wait for the afternoon"
    clock.now = MONDAY_AFTERNOON
    afternoon, again = tick(runtime, ledger), tick(runtime, ledger)

    cell = Cell("baseline-robust", runtime.record.get_run(ids[1]).station)
    assert afternoon.repeats == [run_id_for("2026-W49", cell, 2)]
    assert again.repeats == [] and len(scheduled_events(runtime)) == 19
    repeat = runtime.record.get_run(afternoon.repeats[0])
    assert (repeat.week, repeat.attempt) == ("2026-W49", 2)
    cut_short(runtime, repeat.id)
    assert tick(runtime, ledger).repeats == [], "one repeat a cell; still missing, the cell stays empty"
    clock.now = NEXT_MONDAY
    assert run_id_for("2026-W49", cell, 3) not in tick(runtime, ledger, publishing=False).repeats, \
        "the next Monday repeats only its own week"


def test_a_week_is_published_once_it_is_over_and_never_on_its_own_monday(runtime: Runtime, clock: Clock) -> None:
    ledger = RunLedger(runtime.record)
    ids = tick(runtime, ledger, ["baseline-robust"]).lineup
    for run_id in ids:
        finish(runtime, run_id)
    clock.now = MONDAY_AFTERNOON
    assert tick(runtime, ledger).published == [], "the week is in progress"
    clock.now = datetime(2026, 12, 6, 23, 59, tzinfo=UTC)  # Sunday night
    assert tick(runtime, ledger).published == []
    clock.now = datetime(2026, 12, 7, 0, 1, tzinfo=UTC)  # just over: a run started on Sunday may still land
    assert tick(runtime, ledger).published == []
    clock.now = NEXT_MONDAY
    first, second = tick(runtime, ledger), tick(runtime, ledger)
    assert first.published == ["2026-W49"] and second.published == []
    publications = runtime.record.week_record("2026-W49").publications
    assert [p.provisional for p in publications] == [False]


def test_a_run_started_on_sunday_night_holds_the_publication_until_it_ends(runtime: Runtime, clock: Clock) -> None:
    clock.now = SUNDAY_NIGHT
    [run_id] = schedule_runs(runtime.record, [ScheduleRun.on_course(
        station="s01", model="baseline-robust", requested_by="cli", week=week_of(clock.now))])
    runtime.record.start_run(run_id, worker="test", browser_version="-", agent_version="-")
    ledger = RunLedger(runtime.record)
    clock.now = MONDAY_MORNING
    assert tick(runtime, ledger).published == [], "its run is still running"
    runtime.record.finish_run(run_id, Verdict(passed=True, outcome="passed"), steps=1, seconds=1.0)
    assert tick(runtime, ledger).published == ["2026-W48"], "it started in 2026-W48, so it counts there"


def test_a_week_missed_during_downtime_is_still_published(runtime: Runtime, clock: Clock) -> None:
    clock.now = datetime(2026, 11, 16, 7, 0, tzinfo=UTC)  # 2026-W47
    ids = schedule_course(runtime, "2026-W47", ["baseline-robust"], requested_by="scheduler", stations=["s01"])
    finish(runtime, ids[0])
    clock.now = MONDAY_MORNING  # two weeks later
    done = tick(runtime, RunLedger(runtime.record))
    assert done.published == ["2026-W47"]
    assert SUNDAY < MONDAY_MORNING


def test_a_run_started_on_wednesday_never_changes_the_week_before(runtime: Runtime, clock: Clock) -> None:
    """A W48 run picked up late (or scheduled for W48 by hand) that starts on Wednesday of W49 counts for W49:
    W48's published ranking and its replay stay as they were."""
    clock.now = SUNDAY
    ids = schedule_course(runtime, "2026-W48", ["baseline-robust"], requested_by="scheduler", stations=["s01"])
    finish(runtime, ids[0], passed=False)
    late = schedule_course(runtime, "2026-W48", ["baseline-robust"], requested_by="cli", stations=["s02"])
    clock.now = MONDAY_MORNING
    tick(runtime, RunLedger(runtime.record))
    readmodels = ReadModels(runtime.settings, runtime.record)
    w48 = readmodels.ranking_bytes("2026-W48", as_published=True)
    clock.now = WEDNESDAY
    finish(runtime, late[0])
    readmodels.catch_up()
    assert readmodels.ranking_bytes("2026-W48") == w48
    assert readmodels.ranking_bytes("2026-W48", as_published=True) == w48
    assert readmodels.run(str(late[0])).week == "2026-W49"
    w49 = json.loads(readmodels.ranking_bytes("2026-W49"))
    assert [(e["model"], e["passed"]) for e in w49["entries"]] == [("baseline-robust", 1)]
