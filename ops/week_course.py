"""Executing a week's course from the command line: the embedded pool, or arq workers when Redis is configured.

Either way the event log is what progress is read from, so the count is the same whether runs execute here or
on other machines. Waiting on arq, open runs are enqueued again now and then (a Redis that lost its queue
loses no run) and lapsed leases are reaped (a killed worker's run does not hang the week).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import anyio
import anyio.to_thread

from adapters.wiring import Runtime
from ops.progress import Progress, Tally
from workers.leases import open_leases
from workers.ledger import RunLedger
from workers.pool import EmbeddedPool
from workers.reaper import reap
from workers.resources import build_resources

REQUEUE_EVERY = 15.0
IDLE_HINT_AFTER = 30.0


@dataclass
class CourseRun:
    runtime: Runtime
    ledger: RunLedger
    progress: Progress
    concurrency: int
    lab_url: str
    directory_url: str | None
    run_ids: list[str]

    def _open(self, run_ids: Sequence[str]) -> list[str]:
        return [r for r in run_ids if (s := self.ledger.get(r)) is not None and not s.is_over]

    async def _refresh(self) -> Tally:
        await anyio.to_thread.run_sync(self.ledger.refresh)
        return Tally.of(self.ledger.of(self.run_ids), len(self.run_ids))

    async def execute(self, run_ids: Sequence[str]) -> None:
        """Execute the given runs (those not over yet), showing progress until all are over or given up."""
        self.run_ids.extend(r for r in run_ids if r not in self.run_ids)
        leases = open_leases(self.runtime.settings)
        try:
            await anyio.to_thread.run_sync(reap, self.runtime, leases)
        finally:
            leases.close()
        await self._refresh()
        pending = self._open(run_ids)
        if self.runtime.settings.redis_url:
            await self._through_arq(pending)
        else:
            await self._embedded(pending)
        self.progress.show(await self._refresh())

    async def _embedded(self, pending: list[str]) -> None:
        leases = open_leases(self.runtime.settings)
        resources = build_resources(self.runtime, leases, lab_url=self.lab_url, directory_url=self.directory_url)
        pool = EmbeddedPool(resources, self.concurrency)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._watch)
                await pool.run(pending)
                group.cancel_scope.cancel()
        finally:
            await resources.aclose()

    async def _watch(self) -> None:
        while True:
            self.progress.show(await self._refresh())
            await anyio.sleep(0.5)

    async def _through_arq(self, pending: list[str]) -> None:
        from workers.arq_app import enqueue_runs, queue_pool

        pool = await queue_pool(self.runtime.settings)
        try:
            await enqueue_runs(pool, pending)
            last_requeue = last_change = time.monotonic()
            done = -1
            while True:
                tally = await self._refresh()
                open_now = self._open(pending)
                if not open_now:
                    return
                if tally.done != done:
                    done, last_change = tally.done, time.monotonic()
                idle = time.monotonic() - last_change > IDLE_HINT_AFTER
                self.progress.show(tally, "(waiting for workers: start `canitbuy worker`)" if idle else "")
                if time.monotonic() - last_requeue > REQUEUE_EVERY:
                    await self._heal(pool, open_now)
                    last_requeue = time.monotonic()
                await anyio.sleep(1.0)
        finally:
            await pool.aclose()

    async def _heal(self, pool: object, open_now: list[str]) -> None:
        from workers.arq_app import enqueue_runs

        leases = open_leases(self.runtime.settings)
        try:
            await anyio.to_thread.run_sync(reap, self.runtime, leases)
        finally:
            leases.close()
        await enqueue_runs(pool, [r for r in open_now if self.ledger.runs[r].status == "scheduled"])  # type: ignore[arg-type]
