"""Group commit: the events of concurrent runs saved in one transaction, each caller awaiting its own durability.

Every save of the record is one transaction (about 2.5 ms on PostgreSQL, and the library locks the events table
for it), so runs appending one step each serialise on the lock. One committer thread takes every save waiting
when the last transaction ends and stores them together: under load the batches grow by themselves, and a lone
run waits for nothing (no timer). The notification log keeps its one total order (one transaction, one lock),
and each run's own order holds because a run submits its next step only after this one is durable.

Optimistic concurrency is per run, as before: the events carry their aggregate versions. When a batch fails on a
version conflict (IntegrityError), its saves are tried one by one, so one run's conflict fails that run alone.

Under many runs the process's CPU is the limit (issue 17: 64 runs in flight), so the committer spends little:
async callers wait on asyncio futures that are settled with one wake-up of their event loop per transaction (not a
thread-safe future, a condition and a wake-up each), and the events go to the record's event store directly, which
is what `Record.save` does for events but without checking each one against the library's runtime protocols.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from eventsourcing.application import Application
from eventsourcing.persistence import IntegrityError

from domain.eventlog.record import Record

log = logging.getLogger(__name__)

MAX_BATCH = 256
"""Saves a transaction at most: bounds one transaction's size when thousands of runs wait at once."""
LINGER_SECONDS = 0.004
"""How long a transaction waits for the saves the last one had: the runs it answered come back within a few
milliseconds with their next step, and one transaction for all of them costs less than one each."""


def _saves_only_put(record: Record) -> bool:
    """Whether the record's save does nothing beyond putting the events in its event store."""
    plain = all(getattr(type(record), name) is getattr(Application, name)
                for name in ("save", "_record", "_notify", "notify", "_take_snapshots"))
    return plain and record.repository.cache is None and record.snapshots is None


class _Save:
    """Events waiting for a transaction, and how their caller learns the outcome."""

    events: Sequence[Any]

    def take(self) -> bool:
        """False when the caller gave up before the save was taken into a transaction."""
        raise NotImplementedError

    def settle(self, error: BaseException | None, wakes: dict[asyncio.AbstractEventLoop, list[Any]]) -> None:
        raise NotImplementedError


@dataclass
class _Pending(_Save):
    """A save awaited through a thread-safe future (`submit`)."""

    events: Sequence[Any]
    done: Future[None] = field(default_factory=Future)

    def take(self) -> bool:
        return self.done.set_running_or_notify_cancel()

    def settle(self, error: BaseException | None, wakes: dict[asyncio.AbstractEventLoop, list[Any]]) -> None:
        if error is None:
            self.done.set_result(None)
        else:
            self.done.set_exception(error)


@dataclass
class _AsyncPending(_Save):
    """A save awaited in an event loop (`save`): settled there, with the others of its transaction, at one wake-up."""

    events: Sequence[Any]
    loop: asyncio.AbstractEventLoop
    waiter: asyncio.Future[None]

    def take(self) -> bool:
        return True  # awaited shielded: once queued it is stored, and its caller learns the outcome

    def settle(self, error: BaseException | None, wakes: dict[asyncio.AbstractEventLoop, list[Any]]) -> None:
        wakes.setdefault(self.loop, []).append((self.waiter, error))


def _wake(settled: list[tuple[asyncio.Future[None], BaseException | None]]) -> None:
    for waiter, error in settled:
        if waiter.done():
            continue
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)


class GroupCommitter:
    def __init__(self, record: Record, max_batch: int = MAX_BATCH, linger: float = LINGER_SECONDS) -> None:
        self.record = record
        self._plain = _saves_only_put(record)
        self.max_batch = max_batch
        self.linger = linger
        self._expected = 1
        self._queue: queue.SimpleQueue[_Save | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.transactions = 0
        """Transactions committed so far (the benchmark reports saves a transaction)."""
        self.saves = 0

    def submit(self, events: Sequence[Any]) -> Future[None]:
        """Queue the events for the next transaction; the future is done when they are stored (or failed)."""
        pending = _Pending(events)
        self._ensure_thread()
        self._queue.put(pending)
        return pending.done

    async def save(self, events: Sequence[Any]) -> None:
        """Store the events and return once they are durable. Not cancellable midway: a save already taken
        into a transaction completes, and the caller learns its outcome."""
        loop = asyncio.get_running_loop()
        pending = _AsyncPending(events, loop, loop.create_future())
        self._ensure_thread()
        self._queue.put(pending)
        await asyncio.shield(pending.waiter)

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
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch, stop = self._gather(first)
            self._expected = len(batch)
            self._commit([p for p in batch if p.take()])
            if stop:
                return

    def _gather(self, first: _Save) -> tuple[list[_Save], bool]:
        """The saves waiting now, and those expected soon: as many as the last transaction had (a lone run is
        never kept waiting), for at most `linger` seconds."""
        batch = [first]
        deadline = time.monotonic() + self.linger
        while len(batch) < self.max_batch:
            try:
                if len(batch) < self._expected:
                    item = self._queue.get(timeout=max(deadline - time.monotonic(), 0.0))
                else:
                    item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                return batch, True
            batch.append(item)
        return batch, False

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
        if self._plain:
            self.record.events.put(events)
        else:
            self.record.save(*events)

    @staticmethod
    def _settle(batch: Sequence[_Save], error: Exception | None) -> None:
        wakes: dict[asyncio.AbstractEventLoop, list[Any]] = {}
        for pending in batch:
            pending.settle(error, wakes)
        for loop, settled in wakes.items():
            try:
                loop.call_soon_threadsafe(_wake, settled)
            except RuntimeError:  # the loop closed meanwhile: nobody waits there any more
                log.debug("a save was settled after its event loop closed")
