"""Saving a run: the RunRecorder port on the record, and the group committer that saves concurrent runs' steps in
shared transactions. The agent's run loop reports here, from async code.

eventsourcing is synchronous, so loads and saves go through the group committer's thread (without a committer,
a worker thread). Appends are retried when the database connection drops (a restart); a retry never
duplicates an event, because the run aggregate's version is the guard: a step already stored is recognised and
not stored again.

Group commit: every save of the record is one transaction (about 2.5 ms on PostgreSQL, and the table lock is held
for it), so runs appending one step each would serialise on the lock. One committer thread takes every save
waiting when the last transaction ends and stores them together: under load the batches grow by themselves, and a
lone run waits for nothing (no timer). The notification log keeps its one total order (one transaction, one
lock), and each run's own order holds because a run submits its next step only after this one is durable.
Optimistic concurrency is per run, as before: the events carry their aggregate versions. When a batch fails on a
version conflict (IntegrityError), its saves are tried one by one, so one run's conflict fails that run alone.

Under many runs the process's CPU is the limit (issue 17: 64 runs in flight), so the committer spends little:
- the saves an event loop makes in one pass of its ready callbacks wait in that loop's outbox and reach the
  committer as one item at the end of the pass, so its thread wakes once for all of them, and takes every save
  queued: no timer;
- async callers wait on asyncio futures, settled with the others of their transaction at one wake-up of their loop;
- the events go to the record's event store directly, which is what `Record.save` does for events but without
  checking each one against the library's runtime protocols; on our PostgreSQL recorder the stored rows are built
  as the recorder's columns by the record's own mapper (the same bytes as `to_stored_event`);
- a run is loaded (a recorder's first call, or after a failed save) through the same outbox and thread: the loads
  of one pass cost one thread hop (about 100 us of CPU each), and on our PostgreSQL recorder one select.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from uuid import UUID

import anyio.to_thread
from eventsourcing.persistence import IntegrityError, InterfaceError, OperationalError

from adapters.eventstore import column_store, runs_loader, saves_only_put
from domain.agent.ports import StepRecord
from domain.agent.runs import Run, ShownScreen
from domain.agent.verdicts import CutShortCause, Verdict
from domain.eventlog.record import Record

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0)


def _is_transient(error: Exception) -> bool:
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
                run: Run = self._run if self._run is not None else await self._load()
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

    async def current(self) -> Run:
        """The run as stored now, loaded (retrying while the database is unreachable, as every change is) and kept
        for the changes that follow: the executor reads it once it holds the run's lease, so what it decides on is
        what no other worker can change meanwhile."""
        await self._call(lambda _run: False, "loading run %s", self.run_id)  # loads and keeps it, changes nothing
        assert self._run is not None
        return self._run

    async def _load(self) -> Run:
        if self.committer is not None:
            return await self.committer.load(self.run_id)
        return await anyio.to_thread.run_sync(self.record.get_run, self.run_id)

    async def _save(self, events: Sequence[Any]) -> None:
        if self.committer is not None:
            await self.committer.save(events)  # a step taken into a transaction is waited for, as a thread is
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

    async def media_kept(self, *, trace: str | None, trace_bytes: int, screens: tuple[ShownScreen, ...]) -> None:
        """The run's trace and its video's screens are in the blob store: name them on the run (once; after it
        ended)."""
        def keep(run: Run) -> bool:
            if run.media_kept or not run.is_over:
                return False
            run.keep_media(trace=trace, trace_bytes=trace_bytes, video=None, video_bytes=0, screens=screens,
                           at=self.record.clock())
            return True

        await self._call(keep, "trace and video of run %s", self.run_id)


# --- group commit: concurrent runs' saves in shared transactions ----------------------------------------------
MAX_BATCH = 256
"""Saves a transaction at most: bounds one transaction's size when thousands of runs wait at once."""

_Settled = list[tuple["_Asked", Any, BaseException | None]]
_Wakes = dict[asyncio.AbstractEventLoop, _Settled]


class _Asked:
    """What a caller in an event loop waits for: settled in that loop, with the others of its batch, at one
    wake-up of the loop."""

    __slots__ = ("loop", "outcome", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[Any]) -> None:
        self.loop, self.waiter = loop, waiter
        self.outcome: tuple[Any, BaseException | None] | None = None  # (result, error), once settled in the loop

    def settle(self, error: BaseException | None, wakes: _Wakes, result: object = None) -> None:
        settled = wakes.get(self.loop)
        if settled is None:
            settled = wakes[self.loop] = []
        settled.append((self, result, error))


class _Save(_Asked):
    """Events waiting for a transaction."""

    __slots__ = ("events",)

    def __init__(self, events: Sequence[Any], loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[None]) -> None:
        super().__init__(loop, waiter)
        self.events = events


class _Load(_Asked):
    """A run to load, with the others asked for at the same time."""

    __slots__ = ("run_id",)

    def __init__(self, run_id: UUID, loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[Run]) -> None:
        super().__init__(loop, waiter)
        self.run_id = run_id


def _wake(settled: _Settled) -> None:
    for asked, result, error in settled:
        asked.outcome = result, error  # a cancelled save's caller reads it, whether it asked before or after
        waiter = asked.waiter  # read in the loop's thread: a cancelled save's caller may have given it a new one
        if waiter.done():
            continue
        if error is None:
            waiter.set_result(result)
        else:
            waiter.set_exception(error)


class GroupCommitter:
    def __init__(self, record: Record, max_batch: int = MAX_BATCH) -> None:
        self.record = record
        self._plain = saves_only_put(record)
        self._put_columns = column_store(record) if self._plain else None
        self._load_runs = runs_loader(record)
        self.max_batch = max_batch
        self._queue: queue.SimpleQueue[list[_Asked] | None] = queue.SimpleQueue()
        self._outboxes: dict[asyncio.AbstractEventLoop, list[_Asked]] = {}
        """Each event loop's saves and loads not yet handed to the committer (touched only from that loop's
        thread)."""
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.transactions = 0
        """Transactions committed so far (the benchmark reports saves a transaction)."""
        self.saves = 0

    async def save(self, events: Sequence[Any]) -> None:
        """Store the events and return once they are durable. Not cancellable midway: the save is queued and
        will be stored, so a caller cancelled meanwhile waits for it, shielded, and learns its outcome (the
        save's error, else the cancellation). Shielding only then spares the shield's cancel scope on every
        save (about 4 us of the event loop's time a step)."""
        loop = asyncio.get_running_loop()
        save = _Save(events, loop, loop.create_future())
        self._outbox(loop).append(save)
        try:
            await save.waiter
        except asyncio.CancelledError:
            if save.outcome is None:  # not settled yet: the outcome comes on a new waiter (this one was cancelled)
                save.waiter = loop.create_future()
                with anyio.CancelScope(shield=True):
                    await save.waiter
            if save.outcome is not None and save.outcome[1] is not None:
                raise save.outcome[1] from None  # the save's error
            raise

    async def load(self, run_id: UUID) -> Run:
        """The run as `record.get_run` gives it, loaded with the other runs this event loop asks for in the same
        pass: one thread hop for all of them (and on our recorder one select) where a thread each costs about
        100 us of CPU. A caller cancelled while it waits abandons the load (a read)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Run] = loop.create_future()
        self._outbox(loop).append(_Load(run_id, loop, waiter))
        return await waiter

    def _outbox(self, loop: asyncio.AbstractEventLoop) -> list[_Asked]:
        outbox = self._outboxes.get(loop)
        if outbox is None:  # the first of this pass: the outbox goes to the committer when the pass ends
            outbox = self._outboxes[loop] = []
            loop.call_soon(self._hand_over, loop)
        return outbox

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        """In the loop's thread, after the pass that made its saves and loads: all of them to the committer at
        once."""
        outbox = self._outboxes.pop(loop)
        try:
            if self._thread is None:
                self._ensure_thread()
        except Exception as error:  # noqa: BLE001 - no committer: every caller of the pass learns it
            self._settle(outbox, error)
            return
        self._queue.put(outbox)

    def close(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(30)

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="group-commit", daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        waiting: list[_Asked] = []
        closing = False
        while True:
            if not waiting:
                if closing:
                    return
                first = self._queue.get()
                if first is None:
                    return
                waiting = first
            closing = self._gather(waiting) or closing
            batch, waiting = waiting[:self.max_batch], waiting[self.max_batch:]
            saves = [asked for asked in batch if isinstance(asked, _Save)]
            if len(saves) < len(batch):
                self._load([asked for asked in batch if isinstance(asked, _Load)])
            self._commit(saves)

    def _load(self, loads: list[_Load]) -> None:
        """The runs asked for, all at once; each caller gets its run or what failed."""
        try:
            outcomes = self._load_runs([load.run_id for load in loads])
        except Exception as error:  # noqa: BLE001 - e.g. the database restarting: each recorder retries
            self._settle(loads, error)
            return
        wakes: _Wakes = {}
        for load, outcome in zip(loads, outcomes, strict=True):
            if isinstance(outcome, Exception):
                load.settle(outcome, wakes)
            else:
                load.settle(None, wakes, outcome)
        self._wake_loops(wakes)

    def _gather(self, waiting: list[_Asked]) -> bool:
        """Every save queued now, added to `waiting` (a lone run is never kept waiting: no timer); True when the
        committer is told to close (after the saves queued before)."""
        while len(waiting) < self.max_batch:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return False
            if item is None:
                return True
            waiting.extend(item)
        return False

    def _commit(self, batch: Sequence[_Save]) -> None:
        if not batch:
            return
        try:
            self._store([event for pending in batch for event in pending.events])
        except IntegrityError as error:
            if len(batch) == 1:
                self._settle(batch, error)
            else:
                self._one_by_one(batch)  # whose conflict it is: the others must not fail with it
            return
        except Exception as error:  # noqa: BLE001 - each caller decides (a restart is retried by the recorder)
            self._settle(batch, error)
            return
        self.transactions += 1
        self.saves += len(batch)
        self._settle(batch, None)

    def _one_by_one(self, batch: Sequence[_Save]) -> None:
        for pending in batch:
            try:
                self._store(pending.events)
            except Exception as error:  # noqa: BLE001 - this caller's failure, delivered to it
                self._settle([pending], error)
            else:
                self.transactions += 1
                self.saves += 1
                self._settle([pending], None)

    def _store(self, events: Sequence[Any]) -> None:
        """Store the events in one transaction, as `Record.save` stores events: the record keeps no aggregate
        cache, takes no snapshots and notifies nobody (checked when the committer is made), so putting them in
        its event store is all a save does."""
        if self._put_columns is not None:
            self._put_columns(events)
        elif self._plain:
            self.record.events.put(events)
        else:
            self.record.save(*events)

    @classmethod
    def _settle(cls, batch: Sequence[_Asked], error: Exception | None) -> None:
        wakes: _Wakes = {}
        for pending in batch:
            pending.settle(error, wakes)
        cls._wake_loops(wakes)

    @staticmethod
    def _wake_loops(wakes: _Wakes) -> None:
        for loop, settled in wakes.items():
            try:
                loop.call_soon_threadsafe(_wake, settled)
            except RuntimeError:  # the loop closed meanwhile: nobody waits there any more
                log.debug("a save was settled after its event loop closed")
