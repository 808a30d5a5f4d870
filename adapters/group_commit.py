"""Group commit: the events of concurrent runs saved in one transaction, each caller awaiting its own durability.

Every save of the record is one transaction (about 2.5 ms on PostgreSQL, and the library locks the events table
for it), so runs appending one step each serialise on the lock. One committer thread takes every save waiting
when the last transaction ends and stores them together: under load the batches grow by themselves, and a lone
run waits for nothing (no timer). The notification log keeps its one total order (one transaction, one lock),
and each run's own order holds because a run submits its next step only after this one is durable.

Optimistic concurrency is per run, as before: the events carry their aggregate versions. When a batch fails on a
version conflict (IntegrityError), its saves are tried one by one, so one run's conflict fails that run alone.
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

from eventsourcing.persistence import IntegrityError

from domain.record import Record

log = logging.getLogger(__name__)

MAX_BATCH = 256
"""Saves a transaction at most: bounds one transaction's size when thousands of runs wait at once."""
LINGER_SECONDS = 0.004
"""How long a transaction waits for the saves the last one had: the runs it answered come back within a few
milliseconds with their next step, and one transaction for all of them costs less than one each."""


@dataclass
class _Pending:
    events: Sequence[Any]
    done: Future[None] = field(default_factory=Future)


class GroupCommitter:
    def __init__(self, record: Record, max_batch: int = MAX_BATCH, linger: float = LINGER_SECONDS) -> None:
        self.record = record
        self.max_batch = max_batch
        self.linger = linger
        self._expected = 1
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
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
        future = self.submit(events)
        await asyncio.shield(asyncio.wrap_future(future))

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
            self._commit([p for p in batch if p.done.set_running_or_notify_cancel()])
            if stop:
                return

    def _gather(self, first: _Pending) -> tuple[list[_Pending], bool]:
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

    def _commit(self, batch: list[_Pending]) -> None:
        if not batch:
            return
        try:
            self.record.save(*[event for pending in batch for event in pending.events])
        except IntegrityError as error:
            if len(batch) == 1:
                self._fail(batch, error)
            else:
                self._one_by_one(batch)  # whose conflict it is: the others must not fail with it
            return
        except Exception as error:  # noqa: BLE001 - each caller decides (a restart is retried by the recorder)
            self._fail(batch, error)
            return
        self.transactions += 1
        self.saves += len(batch)
        for pending in batch:
            pending.done.set_result(None)

    def _one_by_one(self, batch: list[_Pending]) -> None:
        for pending in batch:
            try:
                self.record.save(*pending.events)
            except Exception as error:  # noqa: BLE001 - this caller's failure, delivered to it
                pending.done.set_exception(error)
            else:
                self.transactions += 1
                self.saves += 1
                pending.done.set_result(None)

    @staticmethod
    def _fail(batch: list[_Pending], error: Exception) -> None:
        for pending in batch:
            pending.done.set_exception(error)
