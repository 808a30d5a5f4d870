"""What the site holds while it runs: the runtime (record and blobs), the renderer, the page cache and the log
position the read models are at. Built in the lifespan, never at import.

eventsourcing is synchronous: every call into the record goes through a worker thread (`Site.call`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from adapters.settings import Settings
from adapters.wiring import Runtime
from web.rendering import PageCache, Renderer

T = TypeVar("T")
log = logging.getLogger(__name__)

POLL_SECONDS = 0.5


@dataclass
class Site:
    settings: Settings
    runtime: Runtime
    renderer: Renderer
    directory: bytes
    """Our agent's Web Bot Auth key directory (JWKS), served as is."""
    cache: PageCache = field(default_factory=PageCache)
    version: int = -1
    """The notification-log position the site has seen; cached pages are keyed by it."""
    services: dict[str, Any] = field(default_factory=dict)
    """Per-area state (staff accounts, rate limits, read models) set up by each area's start hook."""
    listeners: list[Callable[[int], Any]] = field(default_factory=list)
    """Read models kept by the site, called (in a worker thread) when the log moves."""

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))

    async def refresh(self) -> int:
        """Catch the listeners (read models kept for the site) up with the head of the log, then move the
        version: pages are keyed by it, so it moves only once the data behind them has."""
        head = await self.call(self.runtime.record.head_position)
        if head != self.version:
            for listener in self.listeners:
                await self.call(listener, head)
            self.version = head
        return head

    async def follow(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception:  # a database restart must not stop the site; the next poll retries
                log.exception("following the log failed")
            await anyio.sleep(POLL_SECONDS)
