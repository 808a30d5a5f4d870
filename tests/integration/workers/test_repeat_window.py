"""The cut-short runs are repeated the same Monday afternoon (the method's words), from 14:00 UTC until Monday ends,
and on no other day: the schedule driven by a clock the test moves, and `canitbuy week schedule --now`."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from ops.cli import main
from tests.integration.workers.clocked import MONDAY_MORNING, Clock, cut_short, finish
from workers.ledger import RunLedger
from workers.plan import Cell, run_id_for
from workers.schedule import CatchUp, catch_up

WEEK = "2026-W49"
MONDAY_1355 = datetime(2026, 11, 30, 13, 55, tzinfo=UTC)
MONDAY_1400 = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
MONDAY_1600 = datetime(2026, 11, 30, 16, 0, tzinfo=UTC)
MONDAY_LAST_MINUTE = datetime(2026, 11, 30, 23, 59, tzinfo=UTC)
TUESDAY_MIDNIGHT = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
TUESDAY = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
WEDNESDAY = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
SUNDAY_NIGHT = datetime(2026, 12, 6, 23, 55, tzinfo=UTC)


def tick(runtime: Runtime, ledger: RunLedger, clock: Clock, at: datetime) -> CatchUp:
    clock.now = at
    return catch_up(runtime, ledger, at, models=["baseline-robust"], publish=None)


def repeat_of(runtime: Runtime, run_id: UUID) -> UUID:
    run = runtime.record.get_run(run_id)
    return run_id_for(WEEK, Cell(run.model, run.station, run.repeat), run.attempt + 1)


def exists(runtime: Runtime, run_id: UUID) -> bool:
    return str(run_id) in RunLedger(runtime.record).refresh().runs


def scheduled(runtime: Runtime) -> int:
    return sum(1 for e in runtime.record.read_log(limit=100_000) if e.name == "Run.Scheduled")


def test_a_schedule_that_missed_monday_afternoon_repeats_nothing_later_in_the_week(
        runtime: Runtime, clock: Clock) -> None:
    """Downtime from Monday morning to Tuesday: the cut-short run stays cut short, its cell empty that week."""
    ledger = RunLedger(runtime.record)
    ids = tick(runtime, ledger, clock, MONDAY_MORNING).lineup
    cut_short(runtime, ids[1])
    for run_id in ids[2:]:
        finish(runtime, run_id)
    assert tick(runtime, ledger, clock, MONDAY_1355).repeats == []
    events = scheduled(runtime)
    for at in (TUESDAY_MIDNIGHT, TUESDAY, WEDNESDAY, SUNDAY_NIGHT):
        assert tick(runtime, ledger, clock, at).repeats == [], f"no repeat at {at:%A %H:%M}"
    assert scheduled(runtime) == events
    assert not exists(runtime, repeat_of(runtime, ids[1]))


def test_repeats_are_made_from_monday_two_until_monday_ends(runtime: Runtime, clock: Clock) -> None:
    ledger = RunLedger(runtime.record)
    ids = tick(runtime, ledger, clock, MONDAY_MORNING).lineup
    cut_short(runtime, ids[1])
    assert tick(runtime, ledger, clock, MONDAY_1400).repeats == [repeat_of(runtime, ids[1])]
    cut_short(runtime, ids[2])  # a line-up run cut short during the afternoon: repeated at the next tick
    assert tick(runtime, ledger, clock, MONDAY_1600).repeats == [repeat_of(runtime, ids[2])]
    cut_short(runtime, ids[3])
    assert tick(runtime, ledger, clock, MONDAY_LAST_MINUTE).repeats == [repeat_of(runtime, ids[3])]
    cut_short(runtime, ids[4])  # cut short after Monday: no repeat that week
    assert tick(runtime, ledger, clock, TUESDAY_MIDNIGHT).repeats == []
    assert tick(runtime, ledger, clock, WEDNESDAY).repeats == []
    assert not exists(runtime, repeat_of(runtime, ids[4]))


def test_week_schedule_pretending_a_later_day_makes_no_repeat(sqlite_settings: Settings,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`canitbuy week schedule` does what the schedule does: on Wednesday, the line-up (caught up), no repeat."""
    monkeypatch.setenv("CANITBUY_DATA_DIR", str(sqlite_settings.data_dir))
    for name in ("CANITBUY_DATABASE_URL", "CANITBUY_REDIS_URL", "CANITBUY_LAB_URL", "CANITBUY_MODEL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    clock = Clock(MONDAY_MORNING)
    assert main(["week", "schedule", "--no-execute"], clock=clock) == 0
    with build_runtime(sqlite_settings, clock) as runtime:
        ledger = RunLedger(runtime.record).refresh()
        first = sorted(ledger.newest_attempts(WEEK), key=lambda r: r.run_id)[0]
        cut_short(runtime, UUID(first.run_id))
    capsys.readouterr()
    clock.now = WEDNESDAY
    assert main(["week", "schedule", "--no-execute"], clock=clock) == 0
    assert "and 0 repeats" in capsys.readouterr().out
    assert main(["week", "schedule", "--now", "2026-12-02T15:00Z", "--no-execute"], clock=clock) == 0
    assert "and 0 repeats" in capsys.readouterr().out
