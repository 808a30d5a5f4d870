"""PlaywrightBrowser: one Chromium shared by runs, a fresh context per run, only the store's host reachable."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Browser as PwBrowser
from playwright.async_api import BrowserContext, Page, Playwright, async_playwright

from adapters.botauth import BotAuthSigner
from adapters.browser.session import PlaywrightSession
from adapters.browser.video import FRAME_HEIGHT, FRAME_WIDTH

log = logging.getLogger("canitbuy.browser")
DEBIAN_CHROMIUM = "/usr/lib/chromium/chromium"
USER_AGENT = "CanItBuyAgent/1.0"
VIEWPORT = {"width": 1280, "height": 800}
FRAME_QUALITY = 50
"""JPEG quality of the trace's screencast frames (Playwright's default 90), which Chromium encodes at the video's
frame size, 480x300: at Playwright's default size (800x500) a traced step took 2.2x the floor, at 480x300 1.3x
(bench_agent_step, loaded machine). The video is made from these frames."""
# Requests to any other host go to a proxy that does not exist and fail at once. Per-context proxy rules cost
# nothing per request, unlike route() interception, which would also turn off the HTTP cache.
_NOWHERE = "http://127.0.0.1:9"


class PlaywrightBrowser:
    def __init__(self, signer: BotAuthSigner | None, *, executable: str | None = None) -> None:
        self._signer = signer
        self._executable = executable
        self._playwright: Playwright | None = None
        self._browser: PwBrowser | None = None
        self.version = ""

    async def start(self) -> PlaywrightBrowser:
        self._playwright = await async_playwright().start()
        path = self._executable or (DEBIAN_CHROMIUM if Path(DEBIAN_CHROMIUM).exists() else None)
        options: dict[str, Any] = {"headless": True, "args": ["--disable-quic"]}
        if path and os.path.exists(path):
            options["executable_path"] = path
        self._browser = await self._playwright.chromium.launch(**options)
        self.version = f"chromium/{self._browser.version}"
        return self

    async def stop(self) -> None:
        if self._browser:
            await self._browser.close()
        if self._playwright:
            await self._playwright.stop()

    async def __aenter__(self) -> PlaywrightBrowser:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def session(self, store_url: str, *, media_dir: Path | None = None) -> PlaywrightSession:
        """A fresh context for one run. With `media_dir`, the run keeps a Playwright trace (screencast frames and
        DOM snapshots), written to a folder of its own under it (see `PlaywrightSession.close_keeping_trace`)."""
        assert self._browser is not None, "start() the browser first"
        host = urlsplit(store_url).hostname or ""
        folder: Path | None = None
        if media_dir is not None:
            media_dir.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix="run-", dir=media_dir))
        context = await self._browser.new_context(
            user_agent=USER_AGENT, viewport=VIEWPORT,  # type: ignore[arg-type]
            # "<-loopback>" first (order counts) drops the implicit loopback bypass: other stations stay blocked.
            proxy={"server": _NOWHERE, "bypass": f"<-loopback>,{host}"},
        )
        page = await context.new_page()
        if folder is not None:
            await _trace(context, page)
        return await PlaywrightSession.create(context, page, self._signer, urlsplit(store_url).netloc,
                                              media_dir=folder)


async def _trace(context: BrowserContext, page: Page) -> None:
    """Start the context's trace with its screencast at the video's frame size and FRAME_QUALITY. Tracing has no
    such options: a page's screencast takes the size and quality of its first client and keeps them while any
    client remains (Playwright's `Screencast.start` documents the first). So a client of ours asks for them, the
    trace joins it, and ours leaves before the page has drawn anything (it is blank). A page the run opens besides
    it (a pop-up) is traced at Playwright's default, 800x500."""
    await page.screencast.start(on_frame=_ignore, size={"width": FRAME_WIDTH, "height": FRAME_HEIGHT},
                                quality=FRAME_QUALITY)
    try:
        await context.tracing.start(screenshots=True, snapshots=True)
    finally:
        await page.screencast.stop()


def _ignore(frame: object) -> None:
    pass
