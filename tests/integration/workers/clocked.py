"""What the schedule tests share: a clock the test moves, which the record stamps events with and the schedule
reads, and runs taken through the record by hand (started, then finished or cut short as our error)."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

from adapters.wiring import Runtime
from domain.agent.verdicts import Verdict

MONDAY_MORNING = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)  # 2026-W49, after the line-up's 06:00


class Clock:
    """The time the record stamps events with and the schedule reads: the test moves it."""

    def __init__(self, now: datetime = MONDAY_MORNING) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def finish(runtime: Runtime, run_id: UUID, passed: bool = True) -> None:
    runtime.record.start_run(run_id, worker="test", browser_version="-", agent_version="-")
    runtime.record.finish_run(run_id, Verdict(passed=passed, outcome="passed" if passed else "stopped"),
                              steps=1, seconds=1.0)


def cut_short(runtime: Runtime, run_id: UUID) -> None:
    runtime.record.start_run(run_id, worker="test", browser_version="-", agent_version="-")
    runtime.record.cut_short_run(run_id, "our_error", "worker lost", steps=1)
