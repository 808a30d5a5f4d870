"""One run's browser context: observe in one evaluate, probe for the judge, act with short time-outs."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import shutil
import time
import zipfile
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
from playwright.async_api import BrowserContext, CDPSession, Page, Request, Response
from playwright.async_api import Error as PlaywrightError

from adapters.botauth import BotAuthSigner
from adapters.browser.actions import carry_out
from adapters.browser.media import RunMedia
from adapters.browser.trace_file import SignatureLeft, make_publishable
from adapters.browser.video import Screen
from domain.agent.actions import Action
from domain.agent.observation import Observation, PageProbe

log = logging.getLogger(__name__)

MAX_TEXT = 6000
"""Characters of visible text the harness reads for its guards (never given to an agent)."""
MAX_ELEMENTS = 400
JPEG_QUALITY = 60
# Raw CDP capture: Playwright's own screenshot waits for fonts and animations first (50-90 ms a step).
SCREENSHOT = {"format": "jpeg", "quality": JPEG_QUALITY, "optimizeForSpeed": True}
SCREENSHOT_PAUSES = (0.25, 0.75)  # between the three attempts
"""Chromium under load sometimes answers `Unable to capture screenshot` once (its compositor had no frame ready):
tried again after a short pause, at most three times in all, and the number of retries goes on the step."""
TRANSIENT_SCREENSHOT = "Unable to capture screenshot"
SETTLE_SECONDS = 2.0
QUIET_SECONDS = 0.04
_PROBE = """() => {
  const m = document.querySelector('meta[name="nordlys:checkout"]');
  const text = (id) => { const e = document.getElementById(id); return e ? e.textContent : null; };
  return [location.href, m ? m.getAttribute('content') : null, text('nordlys-order'), text('nordlys-cart'),
          text('nordlys-receipt')];
}"""
PROBE_EXPRESSION = f"({_PROBE})()"
RECEIPT_HEADER = "nordlys-receipt"
GATE_REFUSED_HEADER = "nordlys-gate-refused"
"""Why the lab's bot gate (s13) refused the page's request, on its verification page: read by the harness only."""
_observation = msgspec.convert
_decode = msgspec.json.decode


@cache
def observe_script() -> str:
    return (resources.files("adapters.browser") / "observe.js").read_text()


class ScriptError(RuntimeError):
    """A harness read threw in the page (a page that broke what the script relies on)."""


@cache
def observe_expression() -> str:
    """observe_call() applied to the harness's limits: one expression, as the CDP session evaluates it."""
    return f"({observe_call()})({json.dumps([MAX_TEXT, MAX_ELEMENTS])})"


@cache
def observe_call() -> str:
    """observe.js, its result sent as one JSON string: Playwright carries a nested object as a tree of tagged
    values, validated and rebuilt node by node on our event loop (a tenth of its time in a course); a string is
    one value, and msgspec decodes it in C. The script itself, and so the published agent release, is unchanged."""
    return f"(args) => JSON.stringify((\n{observe_script()}\n)(args))"


async def capture_screenshot(cdp: CDPSession) -> tuple[dict[str, Any], int]:
    """CDP's answer to the harness's raw capture (SCREENSHOT) and how many times Chromium's transient `Unable to
    capture screenshot` was retried to get it (after SCREENSHOT_PAUSES; then the error stands)."""
    for retries, pause in enumerate((*SCREENSHOT_PAUSES, None)):
        try:
            return await cdp.send("Page.captureScreenshot", SCREENSHOT), retries
        except PlaywrightError as error:
            if pause is None or TRANSIENT_SCREENSHOT not in str(error):
                raise
            await asyncio.sleep(pause)
    raise AssertionError("unreachable")


class PlaywrightSession:
    def __init__(self, context: BrowserContext, page: Page, cdp: CDPSession, signer: BotAuthSigner | None,
                 authority: str, media_dir: Path | None = None) -> None:
        self._context, self._page, self._cdp = context, page, cdp
        self._media_dir = media_dir
        """The run's own folder for its trace while it runs; None when it is not kept."""
        self._screens: list[Screen] = []
        """Each observation's screenshot with its time, for the video; kept only with a media folder."""
        self._signer, self._authority = signer, authority
        self._signatures: set[str] = set()
        """The Signature and Signature-Input values sent, looked for in the trace before it is kept."""
        self._status = 200
        self._receipt_header: str | None = None
        self._gate_refused: str | None = None
        self._inflight: set[Request] = set()
        page.on("response", self._on_response)
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    @classmethod
    async def create(cls, context: BrowserContext, page: Page, signer: BotAuthSigner | None,
                     authority: str, media_dir: Path | None = None) -> PlaywrightSession:
        return cls(context, page, await context.new_cdp_session(page), signer, authority, media_dir)

    def _started(self, request: Request) -> None:
        self._inflight.add(request)

    def _ended(self, request: Request) -> None:
        self._inflight.discard(request)

    def _on_response(self, response: Response) -> None:
        # The main document's status tells a verification page (403) from a page that merely says "verify".
        if response.request.is_navigation_request() and response.frame == self._page.main_frame:
            self._status = response.status
            self._gate_refused = response.headers.get(GATE_REFUSED_HEADER)
        # The lab's receipt also comes as a header (s11 sends it on the data its page is built from).
        receipt = response.headers.get(RECEIPT_HEADER)
        if receipt:
            self._receipt_header = receipt

    def gate_refusal(self) -> str | None:
        """Why our lab's bot gate refused the page shown now (its `Nordlys-Gate-Refused` header), else None: for
        the harness, never in what the agent is shown."""
        return self._gate_refused

    async def sign(self) -> None:
        """A fresh signature for this step's requests (short window, no nonce)."""
        if self._signer:
            headers = self._signer.headers(self._authority)
            if self._media_dir is not None:
                self._signatures.update((headers["Signature"], headers["Signature-Input"]))
            await self._context.set_extra_http_headers(headers)

    async def open(self, url: str) -> None:
        await self.sign()
        response = await self._page.goto(url, wait_until="domcontentloaded", timeout=15000)
        self._status = response.status if response else 200

    async def observe(self) -> Observation:
        for attempt in range(3):
            try:
                (shot, retries), data = await asyncio.gather(self._screenshot(), self._read())
                return _observation({**data, "status": self._status, "screenshot": shot,
                                     "browser_retries": retries}, Observation, strict=False)
            except PlaywrightError as error:
                # A navigation started by the last action replaced the page while it was read: read it again.
                if attempt == 2 or "context was destroyed" not in str(error) and "navigat" not in str(error):
                    raise
                await self._page.wait_for_load_state("domcontentloaded", timeout=10000)
        raise AssertionError("unreachable")

    async def _screenshot(self) -> tuple[bytes, int]:
        """The JPEG and how many transient failures were retried to get it (bounded; then the error stands)."""
        shot, retries = await capture_screenshot(self._cdp)
        jpeg = base64.b64decode(shot["data"])
        if self._media_dir is not None:
            self._screens.append(Screen(jpeg=jpeg, at=time.monotonic()))
        return jpeg, retries

    async def _read(self) -> dict[str, Any]:
        with contextlib.suppress(PlaywrightError):  # a slow page is read as far as it got
            await self._page.wait_for_load_state("domcontentloaded", timeout=10000)
        with contextlib.suppress(msgspec.DecodeError, TypeError, ScriptError):
            result = _decode(await self.harness_read(observe_expression()))
            if isinstance(result, dict) and isinstance(result.get("elements"), list):
                return result
        # The page changed JSON.stringify or a prototype's toJSON (old libraries did): read it as objects.
        found: dict[str, Any] = await self._page.evaluate(observe_script(), [MAX_TEXT, MAX_ELEMENTS])
        return found

    async def harness_read(self, expression: str) -> Any:
        """The value of an expression evaluated in the page's main world through the run's CDP session.

        The harness's own reads (the observation, the judge's probe, the check before a click) go this way rather
        than through `page.evaluate`: Playwright's trace records every API call with DOM snapshots before and after
        it, which made each read three times as slow; the trace is of what the agent did (its actions, the pages,
        the network), and the reads are in the run's events anyway. A page's script error raises ScriptError; a
        navigation during the read raises Playwright's own error (`context was destroyed`), as page.evaluate."""
        answer = await self._cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                           "awaitPromise": True})
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise ScriptError(details.get("exception", {}).get("description") or details.get("text", "error"))
        return answer["result"].get("value")

    async def probe(self) -> PageProbe:
        try:
            url, marker, order, cart, receipt = await self.harness_read(PROBE_EXPRESSION)
        except (PlaywrightError, ScriptError):
            await self._page.wait_for_load_state("domcontentloaded", timeout=10000)
            url, marker, order, cart, receipt = await self._page.evaluate(_PROBE)
        checkout_open = marker == "open"
        return PageProbe(url=url, checkout_open=checkout_open, order_json=order, cart_json=cart,
                         receipt=self._receipt(receipt) if checkout_open else None)

    def _receipt(self, script: str | None) -> str | None:
        """The page's receipt (a JSON string in a script), else the newest `Nordlys-Receipt` header seen."""
        if script:
            try:
                value = json.loads(script)
            except ValueError:
                value = None
            if isinstance(value, str) and value:
                return value
        return self._receipt_header

    async def act(self, action: Action, observation: Observation) -> str:
        await self.sign()
        result = await carry_out(self._page, action, self.harness_read)
        await self._settle()
        return result

    async def _settle(self) -> None:
        # A script may fetch first and navigate after (a tile that learns its address on click): wait while
        # requests are in flight, briefly and bounded, so the next observation is of the page that follows.
        deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS
        while self._inflight and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(QUIET_SECONDS)
            if not self._inflight:
                await asyncio.sleep(QUIET_SECONDS)
        with contextlib.suppress(PlaywrightError):
            await self._page.wait_for_load_state("domcontentloaded", timeout=10000)

    async def evaluate(self, script: str) -> Any:
        """For built-in agents' own reading and for tests; never used by the judge's probe."""
        return await self._page.evaluate(script)

    async def close(self) -> None:
        """Close the context; a trace being kept is thrown away (see `close_keeping_trace`)."""
        try:
            await self._context.close()
        finally:
            self.discard_media()

    async def close_keeping_media(self) -> RunMedia | None:
        """Take the screen as the run left it, stop the trace and close the context; returns the trace's file and
        the run's screens, the caller's to make the video from (`adapters/browser/media.py`) and move away (the
        folder they lie in goes with `discard_media`). None when no media was kept. A browser that cannot take
        the last screen or write the trace (a crashed Chromium writes none) leaves the rest. The trace is the
        run's own and holds no live signature: the call stacks Playwright adds of every run on the connection are
        taken out of it, and the values of the Web Bot Auth headers the run sent are redacted; a trace that still
        holds one is not kept (`adapters/browser/trace_file.py`)."""
        folder = self._media_dir
        if folder is None:
            await self._context.close()
            return None
        with contextlib.suppress(PlaywrightError):
            await self._screenshot()
        trace: Path | None = folder / "trace.zip"
        try:
            await self._context.tracing.stop(path=str(trace))
        except PlaywrightError:
            trace = None
        await self._context.close()
        if trace is not None and not trace.is_file():
            trace = None
        if trace is not None:
            try:  # the other runs' call stacks and our signatures out (`trace_file`), or the trace is not kept
                await asyncio.to_thread(make_publishable, trace, frozenset(self._signatures))
            except (zipfile.BadZipFile, OSError, SignatureLeft):
                log.warning("a trace could not be made fit to publish (call stacks, signatures); it is not kept",
                            exc_info=True)
                trace.unlink(missing_ok=True)
                trace = None
        return RunMedia(folder=folder, trace=trace, screens=tuple(self._screens))

    def discard_media(self) -> None:
        """Remove what is left of the run's media folder (files not moved into the blob store)."""
        if self._media_dir is not None:
            shutil.rmtree(self._media_dir, ignore_errors=True)
