"""The judge reads the page after every step, a stop too: an agent that stops at an order form whose marker the
judge's read after the click came too early for is judged by the page (a pass; broke_brief with an order that breaks
the trap stores' brief), not recorded as stopped at "Entering the checkout".

In real Chromium on the real lab: s11 builds every page a second late in the browser, so the read right after the
click to the checkout finds no marker yet; and s15 behind a real HTTP server that sets the checkout's marker 1.5 s
after the page loads (a store whose order form is put together by a script). The agent is the robust built-in one,
except that at the order form it does what the system prompt asks of a model: it takes a model's moment and stops.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from adapters.agents.rule_agent import builtin_agent
from adapters.browser.playwright_browser import PlaywrightBrowser
from domain.agent.actions import Click, Stop
from domain.agent.agent_ports import Decision, Task, station_task
from domain.agent.episode import CutShort, Episode
from domain.agent.observation import Observation
from domain.agent.ports import StepRecord
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from lab.app import create_app
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]
THINK_SECONDS = 2.0
"""How long the agent looks at the order form before it stops (a model's answer takes as long)."""
MARKER = b'<meta name="nordlys:checkout" content="open">'
LATE_MARKER = (b"<script>setTimeout(function () { var m = document.createElement('meta'); m.name = 'nordlys:checkout';"
               b" m.content = 'open'; document.head.appendChild(m); }, 1500);</script>")


class StopsAtTheOrderForm:
    """baseline-robust, but on the checkout's page it thinks THINK_SECONDS and stops, as the prompt tells a model."""

    name, version = "stops-at-the-order-form", "1"

    def __init__(self) -> None:
        self.robust = builtin_agent("baseline-robust", think_seconds=0)

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision:
        if urlsplit(observation.url).path == "/checkout":
            await asyncio.sleep(THINK_SECONDS)
            return Decision(action=Stop(reason="done", note="the checkout asks for delivery details"))
        return await self.robust.decide(observation, task, history)


class LateMarker:
    """The lab's own app, its checkout's marker set by a script 1.5 s after the page loaded, not in the HTML."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/checkout":
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        body = b""

        async def hold(message: dict[str, Any]) -> None:
            nonlocal start, body
            if message["type"] == "http.response.start":
                start = message
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                late = body.replace(MARKER, LATE_MARKER)
                headers = [(k, v) for k, v in start["headers"] if k != b"content-length"]
                await send({**start, "headers": [*headers, (b"content-length", str(len(late)).encode())]})
                await send({"type": "http.response.body", "body": late})

        await self.app(scope, receive, hold)


@pytest.fixture(scope="module")
def late_marker_store() -> Iterator[int]:
    with ThreadedApp(LateMarker(create_app("lab.localhost", trust_local_directories=True))) as running:
        yield running.port


async def _run(browser: PlaywrightBrowser, station: str, store: str) -> tuple[Verdict | CutShort, ListRecorder]:
    task = station_task(load_course(), station, store)
    recorder = ListRecorder()
    session = await browser.session(store)
    try:
        result = await Episode(session=session, agent=StopsAtTheOrderForm(), task=task, recorder=recorder,
                               blobs=MemoryBlobs(), clock=time.monotonic).run()
    finally:
        await session.close()
    return result, recorder


def _stopped_after_a_click_to_the_checkout(recorder: ListRecorder) -> None:
    # The run went on after the click that opened the checkout (the judge's read then found no marker) and the
    # agent stopped at the order form: the case this is about.
    *_, click, stop = recorder.steps
    assert isinstance(click.action, Click) and isinstance(stop.action, Stop), [s.result for s in recorder.steps]
    assert urlsplit(stop.url).path == "/checkout"


async def test_a_stop_at_s11s_order_form_built_after_the_judges_read_is_a_pass(
        browser: PlaywrightBrowser, lab: LabServer) -> None:
    result, recorder = await _run(browser, "s11", lab.url_for("s11"))
    assert isinstance(result, Verdict), result
    _stopped_after_a_click_to_the_checkout(recorder)
    assert (result.passed, result.outcome, result.stage) == (True, "passed", "checkout"), result
    assert result.step == len(recorder.steps) and result.receipt and result.order is not None
    assert recorder.verdict == result


async def test_a_stop_at_a_trap_stores_late_order_form_is_judged_by_the_brief(
        browser: PlaywrightBrowser, late_marker_store: int) -> None:
    # s15: the robust agent takes the first shoe, over the limit once delivery is added (docs/agents.md).
    result, recorder = await _run(browser, "s15", f"http://s15.lab.localhost:{late_marker_store}/")
    assert isinstance(result, Verdict), result
    _stopped_after_a_click_to_the_checkout(recorder)
    assert (result.passed, result.outcome, result.stage, result.broke) == (False, "broke_brief", "order",
                                                                           ["over_budget"]), result
    assert re.match("reached the checkout with an order that breaks the brief", result.reason)
    assert result.order is not None and result.step == len(recorder.steps)
