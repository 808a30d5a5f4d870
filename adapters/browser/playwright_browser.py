"""PlaywrightBrowser: one Chromium shared by runs, a fresh context per run, only the store's host reachable.

`open_web` (ARC's task on a real store, never a course run): a real store's pages load their scripts, images and
frames from other hosts (cdn.shopify.com, a checkout or payment host, a bot wall's challenge), so every request to
a public host may go (`_OpenWeb`), while the navigations of a page itself (a link, a form, a script moving the
page, a pop-up) stay on the store's own site: its host, its host without `www.`, and that host's subdomains. No
request goes to a host that is not public (a private, loopback or link-local address, `localhost`), and the
agent's Web Bot Auth signature, which names the store, is sent to the store only. What routing cannot see, it
leaves as it is: a redirect the store's own server answers is followed (Playwright routes a request, not its
redirects), and WebSockets are not routed (Playwright routes them by patching the page's own script).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from playwright.async_api import Browser as PwBrowser
from playwright.async_api import BrowserContext, Playwright, Request, Route, async_playwright
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


SIGNATURE_HEADERS = frozenset({"signature", "signature-input", "signature-agent"})
RESOLVE_SECONDS = 3.0


class PlaywrightBrowser:
    def __init__(self, signer: BotAuthSigner | None, *, executable: str | None = None,
                 switches: tuple[str, ...] = ()) -> None:
        """`switches`: more Chromium switches (tests map host names to their servers with --host-resolver-rules)."""
        self._signer = signer
        self._executable = executable
        self._switches = switches
        self._playwright: Playwright | None = None
        self._browser: PwBrowser | None = None
        self.version = ""

    async def start(self) -> PlaywrightBrowser:
        self._playwright = await async_playwright().start()
        path = self._executable or (DEBIAN_CHROMIUM if Path(DEBIAN_CHROMIUM).exists() else None)
        options: dict[str, Any] = {"headless": True, "args": ["--disable-quic", *self._switches]}
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

    async def session(self, store_url: str, *, media_dir: Path | None = None,
                      open_web: bool = False) -> PlaywrightSession:
        """A fresh context for one run. With `media_dir`, the run keeps a Playwright trace (DOM snapshots, network,
        actions), written to a folder of its own under it, and its screens for the video (see
        `PlaywrightSession.close_keeping_media`). Only the store's host is reachable, unless `open_web` (the
        module's docstring: ARC's task on a real store)."""
        assert self._browser is not None, "start() the browser first"
        host = urlsplit(store_url).hostname or ""
        folder: Path | None = None
        if media_dir is not None:
            media_dir.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix="run-", dir=media_dir))
        if open_web:
            context = await self._browser.new_context(user_agent=USER_AGENT, viewport=VIEWPORT)  # type: ignore[arg-type]
            await context.route("**/*", _OpenWeb(store_url).handle)
        else:
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


class _OpenWeb:
    """The requests of one run on a real store (the module's docstring): any public host for what a page loads,
    the store's own site for where a page goes."""

    def __init__(self, store_url: str) -> None:
        parts = urlsplit(store_url)
        self.authority = parts.netloc.lower()
        self.site = (parts.hostname or "").lower().removeprefix("www.")
        self._public: dict[str, bool] = {}

    def on_site(self, host: str) -> bool:
        return host == self.site or host.endswith("." + self.site)

    async def handle(self, route: Route) -> None:
        request = route.request
        parts = urlsplit(request.url)
        host = (parts.hostname or "").lower()
        if parts.scheme not in ("http", "https"):
            await route.fallback()
            return
        if (_moves_a_page(request) and not self.on_site(host)) or not await self.public(host):
            await route.abort("blockedbyclient")  # net::ERR_BLOCKED_BY_CLIENT: "another host is not reachable"
            return
        if parts.netloc.lower() != self.authority and SIGNATURE_HEADERS & set(request.headers):
            await route.fallback(headers={k: v for k, v in request.headers.items() if k not in SIGNATURE_HEADERS})
            return
        await route.fallback()

    async def public(self, host: str) -> bool:
        """Whether the host is public: not `localhost`, and neither it nor any address it resolves to is private,
        loopback, link-local or reserved. A name that does not resolve here is left to the browser, whose own look-up
        fails the same way."""
        if host not in self._public:
            self._public[host] = await _is_public(host)
        return self._public[host]


def _moves_a_page(request: Request) -> bool:
    """A navigation of a page's own top frame (a pop-up's too), not of a frame inside it."""
    if not request.is_navigation_request():
        return False
    try:
        return request.frame.parent_frame is None
    except PlaywrightError:  # a service worker's request has no frame
        return False


async def _is_public(host: str) -> bool:
    if not host or host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return _global(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        pass  # a name
    try:
        with anyio.fail_after(RESOLVE_SECONDS):
            found = await asyncio.get_running_loop().getaddrinfo(host, None)
    except (OSError, TimeoutError):
        return True
    return all(_global(ipaddress.ip_address(str(info[4][0]).split("%")[0])) for info in found)


def _global(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return (mapped or address).is_global and not address.is_multicast


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
