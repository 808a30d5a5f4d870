"""The embedded pool: with no Redis configured, the same `execute_run` runs in-process under anyio.

At most `concurrency` runs at once, taken strictly in the order given (so each model's control run starts
before its obstacle runs). A run whose executor raised stays open in the log and is reported, never retried
silently here: the next `week run` or `week schedule` finds it again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from workers.executor import execute_run
from workers.resources import Resources

log = logging.getLogger("canitbuy.pool")

OnDone = Callable[[str, str], None]
"""Called with (run id, result word) as each run ends."""


class EmbeddedPool:
    def __init__(self, resources: Resources, concurrency: int) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.resources = resources
        self.concurrency = concurrency

    async def run(self, run_ids: Sequence[str], on_done: OnDone | None = None) -> dict[str, str]:
        results: dict[str, str] = {}
        send, receive = anyio.create_memory_object_stream[str](max_buffer_size=len(run_ids) or 1)
        for run_id in run_ids:
            send.send_nowait(run_id)
        send.close()

        async def worker() -> None:
            async for run_id in receive:
                results[run_id] = await self._one(run_id)
                if on_done is not None:
                    on_done(run_id, results[run_id])

        async with receive, anyio.create_task_group() as group:
            for _ in range(min(self.concurrency, len(run_ids))):
                group.start_soon(worker)
        return results

    async def _one(self, run_id: str) -> str:
        ctx: dict[str, Any] = {"resources": self.resources, "job_try": 1, "job_id": run_id}
        try:
            return await execute_run(ctx, run_id)
        except Exception as error:  # noqa: BLE001 - one broken run must not stop the others
            log.exception("run %s failed outside its episode", run_id)
            return f"error: {type(error).__name__}: {error}"
