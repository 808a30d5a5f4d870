"""What the site holds while it runs: the runtime (record and blobs), the renderer, the page cache and the log
position the read models are at. Built in the lifespan, never at import.

eventsourcing is synchronous: every call into the record goes through a worker thread (`Site.call`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread

from adapters.settings import Settings
from adapters.wiring import Runtime
from domain.projections.spend import SpendFold
from web.front_pages import FrontPages
from web.rendering import PageCache, Renderer

if TYPE_CHECKING:  # each area's state, built by its start function in the lifespan (those modules import Site)
    from web.data import SiteData
    from web.public.agent_page import AgentUse
    from web.public.data_page import Releases
    from web.public.leaderboard import Board
    from web.public.manual_tests import ManualTests
    from web.staff.guard import Desk
    from web.staff.leaderboard_desk import ReceiptVerifier
    from web.staff.own_agent import OwnReceipts
    from web.submission_caps import FloodGuard
    from web.videos import RunVideos

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
    front: FrontPages
    """The pages answered before the router at this position (web/front_pages.py), the same table the app's
    middleware reads; moved on with `version`."""
    cache: PageCache = field(default_factory=PageCache)
    version: int = -1
    """The notification-log position the site has seen; cached pages are keyed by it."""
    # Each area's state, set once by its start function in the lifespan (web/app.py), before any request.
    data: SiteData = field(init=False)
    manual: ManualTests = field(init=False)
    board: Board = field(init=False)
    agent_use: AgentUse = field(init=False)
    desk: Desk = field(init=False)
    receipt_verifier: ReceiptVerifier = field(init=False)
    own_receipts: OwnReceipts = field(init=False)
    """Our agent's keys and our runs' receipts, refused as an outside agent's (web/staff/own_agent.py)."""
    videos: RunVideos = field(init=False)
    """Runs' videos, made from their screens when first watched (web/videos.py)."""
    network_salt: bytes = b""
    """The key of the leaderboard's network hashes (not the session cookies' key)."""
    submission_flood: FloodGuard = field(init=False)
    dataset: Releases = field(init=False)
    """The open dataset's releases made so far (web/public/data_page.py)."""
    spend: SpendFold = field(default_factory=SpendFold.empty)
    """The week's spend folded from the log (web/public/spend.py), moved on under its lock."""
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
            self.front.moved(head)
        return head

    async def follow(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception:  # a database restart must not stop the site; the next poll retries
                log.exception("following the log failed")
            await anyio.sleep(POLL_SECONDS)
