"""PlaywrightBrowser: one Chromium shared by runs, a fresh context per run, only the store's host reachable."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Browser as PwBrowser
from playwright.async_api import BrowserContext, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from adapters.botauth import BotAuthSigner
from adapters.browser.session import PlaywrightSession

log = logging.getLogger("canitbuy.browser")
DEBIAN_CHROMIUM = "/usr/lib/chromium/chromium"
USER_AGENT = "CanItBuyAgent/1.0"
VIEWPORT = {"width": 1280, "height": 800}
# Requests to any other host go to a proxy that does not exist and fail at once. Per-context proxy rules cost
# nothing per request, unlike route() interception, which would also turn off the HTTP cache.
_NOWHERE = "http://127.0.0.1:9"
# Browser UI no run can see. Chromium's headless mode (Debian's build, 156) gives every window, so every context,
# the address bar's pop-ups as two WebUI pages of their own (chrome://omnibox-popup.top-chrome/ and its AI-mode
# page), each a renderer loading the search box's scripts: about 0.55 s of CPU a context on two cores, measured
# beside the same contexts without them (bench/PROFILE-course.md). The pages the runs visit are not touched.
UNSHOWN_UI_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
_DISABLE_FEATURES = "--disable-features="
# Playwright's own list, per Chromium binary: Chromium keeps the last --disable-features switch only, so ours has to
# repeat Playwright's (PaintHolding, HttpsUpgrades, ...) or it would turn them back on.
_playwright_disabled: dict[str, tuple[str, ...] | None] = {}


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
        key = str(options.get("executable_path", ""))
        if key not in _playwright_disabled:
            _playwright_disabled[key] = await _default_disabled_features(self._playwright, options)
        theirs = _playwright_disabled[key]
        if theirs is not None:
            features = [*theirs, *UNSHOWN_UI_FEATURES]
            options["args"] = [*options["args"], _DISABLE_FEATURES + ",".join(dict.fromkeys(features))]
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
        """A fresh context for one run. With `media_dir`, the run keeps a Playwright trace (DOM snapshots, network,
        actions), written to a folder of its own under it, and its screens for the video (see
        `PlaywrightSession.close_keeping_media`)."""
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
            await _trace(context)
        return await PlaywrightSession.create(context, page, self._signer, urlsplit(store_url).netloc,
                                              media_dir=folder)


async def _default_disabled_features(playwright: Playwright, options: dict[str, Any]) -> tuple[str, ...] | None:
    """The features Playwright's launch turns off, as the browser itself reports its command line (chrome://version);
    once per binary and process. None when the browser does not show it (a build without that page): the launch
    then keeps Playwright's switches as they are, pop-ups and all, rather than turn Playwright's list back on."""
    browser = await playwright.chromium.launch(**options)
    try:
        page = await browser.new_page()
        await page.goto("chrome://version", timeout=5000)
        command_line = await page.inner_text("#command_line", timeout=5000)
    except PlaywrightError as error:
        log.warning("Chromium's command line could not be read (%s): its address bar's pop-ups stay on",
                    str(error).splitlines()[0])
        return None
    finally:
        await browser.close()
    for argument in command_line.split():
        if argument.startswith(_DISABLE_FEATURES):
            return tuple(feature for feature in argument[len(_DISABLE_FEATURES):].split(",") if feature)
    return ()


async def _trace(context: BrowserContext) -> None:
    """Start the context's trace: every action with DOM snapshots before and after it, the network with response
    bodies, the console. Not its screenshots: they are Chromium's screencast, which reads back every frame the
    compositor draws and cost the course about a fifth of Chromium's CPU (bench/PROFILE-course.md); the run's
    video is made of the screens the agent was shown instead (`adapters/browser/video.py`)."""
    await context.tracing.start(screenshots=False, snapshots=True)
