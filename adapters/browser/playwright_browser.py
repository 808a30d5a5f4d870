"""PlaywrightBrowser: one Chromium shared by runs, a fresh context per run, only the store's host reachable."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Browser as PwBrowser
from playwright.async_api import Playwright, async_playwright

from adapters.botauth import BotAuthSigner
from adapters.browser.media import DEFAULT_REGISTRY, VideoEncoderMissingError, ensure_video_encoder
from adapters.browser.session import PlaywrightSession

log = logging.getLogger("canitbuy.browser")
DEBIAN_CHROMIUM = "/usr/lib/chromium/chromium"
USER_AGENT = "CanItBuyAgent/1.0"
VIEWPORT = {"width": 1280, "height": 800}
VIDEO_SIZE = {"width": 480, "height": 300}
"""The video's frame: the viewport scaled to 480 pixels wide. Chromium encodes every frame of the screencast at
this size, for the video and the trace alike: in bench_agent_step on a loaded machine, a step with trace and
video took 2.2x the floor at 800x500 (Playwright's default), 1.7x at 640x400, 1.3x at 480x300. Each step's
full-size screenshot is in the recording, and the trace holds the pages themselves (DOM snapshots); the video
shows how the run went."""
# Requests to any other host go to a proxy that does not exist and fail at once. Per-context proxy rules cost
# nothing per request, unlike route() interception, which would also turn off the HTTP cache.
_NOWHERE = "http://127.0.0.1:9"


class PlaywrightBrowser:
    def __init__(self, signer: BotAuthSigner | None, *, executable: str | None = None,
                 playwright_dir: Path = DEFAULT_REGISTRY) -> None:
        self._signer = signer
        self._executable = executable
        self._playwright_dir = playwright_dir
        self._encoder_ready: bool | None = None
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

    def _video_encoder(self) -> bool:
        """Whether videos can be made: without an ffmpeg (or a registry we may not write to) runs keep their trace
        alone, and the worker says why once, rather than failing every run over a missing encoder."""
        if self._encoder_ready is None:
            try:
                ensure_video_encoder(self._playwright_dir)
                self._encoder_ready = True
            except (OSError, VideoEncoderMissingError) as error:
                log.warning("runs keep no video: %s", error)
                self._encoder_ready = False
        return self._encoder_ready

    async def session(self, store_url: str, *, media_dir: Path | None = None) -> PlaywrightSession:
        """A fresh context for one run. With `media_dir`, the run keeps a Playwright trace (screenshots and DOM
        snapshots) and a video, written to a folder of their own under it (see `PlaywrightSession.close`)."""
        assert self._browser is not None, "start() the browser first"
        host = urlsplit(store_url).hostname or ""
        folder: Path | None = None
        options: dict[str, Any] = {}
        if media_dir is not None:
            media_dir.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix="run-", dir=media_dir))
            if self._video_encoder():
                options = {"record_video_dir": str(folder), "record_video_size": VIDEO_SIZE}
        context = await self._browser.new_context(
            user_agent=USER_AGENT, viewport=VIEWPORT,  # type: ignore[arg-type]
            # "<-loopback>" first (order counts) drops the implicit loopback bypass: other stations stay blocked.
            proxy={"server": _NOWHERE, "bypass": f"<-loopback>,{host}"},
            **options,
        )
        if folder is not None:
            await context.tracing.start(screenshots=True, snapshots=True)
        page = await context.new_page()
        return await PlaywrightSession.create(context, page, self._signer, urlsplit(store_url).netloc,
                                              media_dir=folder)
