"""The RunRecorder port on the record: the agent's run loop reports here, from async code.

eventsourcing is synchronous, so every call goes through a worker thread. Appends are retried when the
database connection drops (a restart); a retry never duplicates an event, because the run aggregate's version
is the guard: a step already stored is recognised and not stored again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar
from uuid import UUID

import anyio.to_thread

from domain.ports import StepRecord
from domain.record import Record
from domain.verdicts import CutShortCause, Verdict

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0)


def _is_transient(error: Exception) -> bool:
    from eventsourcing.persistence import IntegrityError, InterfaceError, OperationalError

    if isinstance(error, IntegrityError):
        return False
    return isinstance(error, (OperationalError, InterfaceError, ConnectionError))


def with_retries(action: Callable[[], T], what: str) -> T:
    """Run a store call, retrying while the database is unreachable (e.g. PostgreSQL restarting)."""
    for delay in (*RETRY_DELAYS, None):
        try:
            return action()
        except Exception as error:
            if delay is None or not _is_transient(error):
                raise
            log.warning("%s failed (%s); retrying in %.1fs", what, error, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


class RecordRunRecorder:
    def __init__(self, record: Record, run_id: UUID) -> None:
        self.record = record
        self.run_id = run_id

    async def _call(self, fn: Callable[[], None], what: str) -> None:
        await anyio.to_thread.run_sync(lambda: with_retries(fn, what))

    async def started(self, *, worker: str, browser_version: str, agent_version: str,
                      agent_release: int = 0) -> None:
        def start() -> None:
            if self.record.get_run(self.run_id).status != "scheduled":
                return  # stored by an attempt whose answer was lost
            self.record.start_run(
                self.run_id, worker=worker, browser_version=browser_version, agent_version=agent_version,
                agent_release=agent_release,
            )

        await self._call(start, f"start of run {self.run_id}")

    async def step_recorded(self, step: StepRecord) -> None:
        def append() -> None:
            if self.record.get_run(self.run_id).steps_recorded >= step.number:
                return
            self.record.record_steps(self.run_id, [step])

        await self._call(append, f"step {step.number} of run {self.run_id}")

    async def finished(self, verdict: Verdict, *, steps: int, seconds: float) -> None:
        def finish() -> None:
            if self.record.get_run(self.run_id).is_over:
                return
            self.record.finish_run(self.run_id, verdict, steps=steps, seconds=seconds)

        await self._call(finish, f"finish of run {self.run_id}")

    async def cut_short(self, cause: CutShortCause, detail: str, *, steps: int, seconds: float) -> None:
        def cut() -> None:
            if self.record.get_run(self.run_id).is_over:
                return
            self.record.cut_short_run(self.run_id, cause, detail, steps=steps, seconds=seconds)

        await self._call(cut, f"cut-short of run {self.run_id}")
