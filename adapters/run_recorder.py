"""The RunRecorder port on the record: the agent's run loop reports here, from async code.

eventsourcing is synchronous, so loads go through a worker thread and saves through the group committer's
thread (or a worker thread). Appends are retried when the database connection drops (a restart); a retry never
duplicates an event, because the run aggregate's version is the guard: a step already stored is recognised and
not stored again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from uuid import UUID

import anyio.to_thread

from adapters.group_commit import GroupCommitter
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.agent.verdicts import CutShortCause, Verdict
from domain.eventlog.record import Record

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
    """Records one run. The run aggregate is loaded once and kept: a step is one event added to it and one save,
    not a replay of the run's events before every step. Saves go through the group committer when there is one
    (several runs' steps a transaction); after any failed save the kept aggregate is dropped and the run is
    loaded again, so a retry sees what was really stored."""

    def __init__(self, record: Record, run_id: UUID, committer: GroupCommitter | None = None) -> None:
        self.record = record
        self.run_id = run_id
        self.committer = committer
        self._run: Run | None = None

    async def _call(self, change: Callable[[Run], bool], what: str, *args: object) -> None:
        """Apply `change` to the run (it returns False when the change is stored already) and save it durably,
        retrying while the database is unreachable. `what % args` names the change in the log (made only then)."""
        for delay in (*RETRY_DELAYS, None):
            try:
                run: Run = self._run if self._run is not None else await anyio.to_thread.run_sync(
                    self.record.get_run, self.run_id)
                self._run = run
                if not change(run):
                    return
                await self._save(run.collect_events())
                return
            except Exception as error:
                self._run = None  # its version may be ahead of the store now: load it again
                if delay is None or not _is_transient(error):
                    raise
                log.warning("%s failed (%s); retrying in %.1fs", what % args, error, delay)
                await anyio.sleep(delay)

    async def _save(self, events: Sequence[Any]) -> None:
        if self.committer is not None:
            with anyio.CancelScope(shield=True):  # a step taken into a transaction is waited for, as a thread is
                await self.committer.save(events)
        else:
            await anyio.to_thread.run_sync(lambda: self.record.save(*events))

    async def started(self, *, worker: str, browser_version: str, agent_version: str,
                      agent_release: int = 0) -> None:
        def start(run: Run) -> bool:
            if run.status != "scheduled":
                return False  # stored by an attempt whose answer was lost
            run.start(worker=worker, browser_version=browser_version, agent_version=agent_version,
                      agent_release=agent_release, at=self.record.clock())
            return True

        await self._call(start, "start of run %s", self.run_id)

    async def step_recorded(self, step: StepRecord) -> None:
        def append(run: Run) -> bool:
            if run.steps_recorded >= step.number:
                return False
            run.record_step(step, at=self.record.clock())
            return True

        await self._call(append, "step %s of run %s", step.number, self.run_id)

    async def finished(self, verdict: Verdict, *, steps: int, seconds: float) -> None:
        def finish(run: Run) -> bool:
            if run.is_over:
                return False
            run.finish(verdict, steps=steps, seconds=seconds, at=self.record.clock())
            return True

        await self._call(finish, "finish of run %s", self.run_id)

    async def cut_short(self, cause: CutShortCause, detail: str, *, steps: int, seconds: float) -> None:
        self._run = None  # whoever cuts it short may not be the one who ran it: read what the store holds

        def cut(run: Run) -> bool:
            if run.is_over:
                return False
            run.cut_short(cause, detail, steps=steps, seconds=seconds, at=self.record.clock())
            return True

        await self._call(cut, "cut-short of run %s", self.run_id)

    async def media_kept(self, *, trace: str | None, trace_bytes: int, video: str | None, video_bytes: int) -> None:
        """The run's trace and video are in the blob store: name them on the run (once; after it ended)."""
        def keep(run: Run) -> bool:
            if run.media_kept or not run.is_over:
                return False
            run.keep_media(trace=trace, trace_bytes=trace_bytes, video=video, video_bytes=video_bytes,
                           at=self.record.clock())
            return True

        await self._call(keep, "trace and video of run %s", self.run_id)
