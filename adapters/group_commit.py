"""Group commit: the events of concurrent runs saved in one transaction, each caller awaiting its own durability.

Every save of the record is one transaction (about 2.5 ms on PostgreSQL, and the library locks the events table
for it), so runs appending one step each serialise on the lock. One committer thread takes every save waiting
when the last transaction ends and stores them together: under load the batches grow by themselves, and a lone
run waits for nothing (no timer). The notification log keeps its one total order (one transaction, one lock),
and each run's own order holds because a run submits its next step only after this one is durable.

Optimistic concurrency is per run, as before: the events carry their aggregate versions. When a batch fails on a
version conflict (IntegrityError), its saves are tried one by one, so one run's conflict fails that run alone.

Under many runs the process's CPU is the limit (issue 17: 64 runs in flight), so the committer spends little:
- the saves an event loop makes in one pass of its ready callbacks (every run its last transaction woke) wait in
  that loop's outbox and reach the committer as one item at the end of the pass, so its thread wakes once for all
  of them (not once a save, fighting the loop for the interpreter lock), and takes every save queued: no timer;
- async callers wait on asyncio futures, settled with the others of their transaction at one wake-up of their loop;
- the events go to the record's event store directly, which is what `Record.save` does for events but without
  checking each one against the library's runtime protocols; on our PostgreSQL recorder the stored rows are built
  as the recorder's columns by the record's own mapper (the same bytes as `to_stored_event`), with no
  `StoredEvent` between.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from eventsourcing.application import Application
from eventsourcing.persistence import IntegrityError

from adapters.pg_recorder import OneTripRecorder
from domain.eventlog.record import Record
from domain.eventlog.schema import MsgspecMapper

log = logging.getLogger(__name__)

MAX_BATCH = 256
"""Saves a transaction at most: bounds one transaction's size when thousands of runs wait at once."""

_Wakes = dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[None], BaseException | None]]]


def _saves_only_put(record: Record) -> bool:
    """Whether the record's save does nothing beyond putting the events in its event store."""
    plain = all(getattr(type(record), name) is getattr(Application, name)
                for name in ("save", "_record", "_notify", "notify", "_take_snapshots"))
    return plain and record.repository.cache is None and record.snapshots is None


def _column_store(record: Record) -> Callable[[Sequence[Any]], object] | None:
    """Stores events as `record.events.put` does, from the columns the record's mapper makes: when the recorder
    is ours and the mapper is the schema's (which neither compresses nor encrypts), else None."""
    recorder, mapper = record.recorder, record.mapper
    if type(mapper) is not MsgspecMapper or not isinstance(recorder, OneTripRecorder):
        return None
    if record.events.recorder is not recorder or record.events.mapper is not mapper:
        return None
    columns, insert = mapper.to_columns, recorder.insert_columns
    return lambda events: insert(*columns(events))


class _Save:
    """Events waiting for a transaction, and how their caller learns the outcome."""

    __slots__ = ("events",)

    events: Sequence[Any]

    def take(self) -> bool:
        """False when the caller gave up before the save was taken into a transaction."""
        raise NotImplementedError

    def settle(self, error: BaseException | None, wakes: _Wakes) -> None:
        raise NotImplementedError


class _Pending(_Save):
    """A save awaited through a thread-safe future (`submit`)."""

    __slots__ = ("done",)

    def __init__(self, events: Sequence[Any], done: Future[None] | None = None) -> None:
        self.events = events
        self.done: Future[None] = Future() if done is None else done

    def take(self) -> bool:
        return self.done.set_running_or_notify_cancel()

    def settle(self, error: BaseException | None, wakes: _Wakes) -> None:
        if error is None:
            self.done.set_result(None)
        else:
            self.done.set_exception(error)


class _AsyncPending(_Save):
    """A save awaited in an event loop (`save`): settled there, with the others of its transaction, at one wake-up."""

    __slots__ = ("loop", "waiter")

    def __init__(self, events: Sequence[Any], loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[None]) -> None:
        self.events, self.loop, self.waiter = events, loop, waiter

    def take(self) -> bool:
        return True  # awaited shielded: once queued it is stored, and its caller learns the outcome

    def settle(self, error: BaseException | None, wakes: _Wakes) -> None:
        settled = wakes.get(self.loop)
        if settled is None:
            settled = wakes[self.loop] = []
        settled.append((self.waiter, error))


def _wake(settled: list[tuple[asyncio.Future[None], BaseException | None]]) -> None:
    for waiter, error in settled:
        if waiter.done():
            continue
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)


class GroupCommitter:
    def __init__(self, record: Record, max_batch: int = MAX_BATCH) -> None:
        self.record = record
        self._plain = _saves_only_put(record)
        self._put_columns = _column_store(record) if self._plain else None
        self.max_batch = max_batch
        self._queue: queue.SimpleQueue[list[_Save] | None] = queue.SimpleQueue()
        self._outboxes: dict[asyncio.AbstractEventLoop, list[_Save]] = {}
        """Each event loop's saves not yet handed to the committer (touched only from that loop's thread)."""
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.transactions = 0
        """Transactions committed so far (the benchmark reports saves a transaction)."""
        self.saves = 0

    def submit(self, events: Sequence[Any]) -> Future[None]:
        """Queue the events for the next transaction; the future is done when they are stored (or failed)."""
        pending = _Pending(events)
        self._ensure_thread()
        self._queue.put([pending])
        return pending.done

    async def save(self, events: Sequence[Any]) -> None:
        """Store the events and return once they are durable. Not cancellable midway: a save already taken
        into a transaction completes, and the caller learns its outcome."""
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        outbox = self._outboxes.get(loop)
        if outbox is None:  # the first save of this pass: the outbox goes to the committer when the pass ends
            outbox = self._outboxes[loop] = []
            loop.call_soon(self._hand_over, loop)
        outbox.append(_AsyncPending(events, loop, waiter))
        await waiter  # cancelling the caller cancels only its wait: the save is queued, and is stored

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        """In the loop's thread, after the pass that made its saves: all of them to the committer at once."""
        outbox = self._outboxes.pop(loop)
        try:
            if self._thread is None:
                self._ensure_thread()
        except Exception as error:  # noqa: BLE001 - no committer: every save of the pass learns it
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
        waiting: list[_Save] = []
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
            self._commit([p for p in batch if p.take()])

    def _gather(self, waiting: list[_Save]) -> bool:
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

    @staticmethod
    def _settle(batch: Sequence[_Save], error: Exception | None) -> None:
        wakes: _Wakes = {}
        for pending in batch:
            pending.settle(error, wakes)
        for loop, settled in wakes.items():
            try:
                loop.call_soon_threadsafe(_wake, settled)
            except RuntimeError:  # the loop closed meanwhile: nobody waits there any more
                log.debug("a save was settled after its event loop closed")
