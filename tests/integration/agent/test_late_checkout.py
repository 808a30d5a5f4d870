"""The run's time bounds the whole run, not only each decision: a checkout the judge reads after the run's seconds
are up (the action that opened it, or the judge's read, ran past them) is no pass but a time limit. In real Chromium
on the real lab app, served behind a real HTTP server whose order form answers slowly, with the robust built-in
agent; the same store with a limit long enough passes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from adapters.agents.rule_agent import builtin_agent
from adapters.browser.playwright_browser import PlaywrightBrowser
from domain.agent.agent_ports import station_task
from domain.agent.episode import CutShort, Episode
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from lab.app import create_app
from tests.integration.agent.conftest import ThreadedApp
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]
SLOW_SECONDS = 6.0
"""How long the store takes to answer its order form (/checkout)."""


class SlowCheckout:
    """The lab's own app, its order form answered SLOW_SECONDS late (a slow page of a real store)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/checkout":
            await asyncio.sleep(SLOW_SECONDS)
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def slow_store() -> Iterator[str]:
    with ThreadedApp(SlowCheckout(create_app("lab.localhost", trust_local_directories=True))) as running:
        yield f"http://s01.lab.localhost:{running.port}/"


async def _run(browser: PlaywrightBrowser, store: str, seconds: float) -> tuple[Verdict | CutShort, ListRecorder,
                                                                                 float]:
    task = station_task(load_course(), "s01", store)
    recorder = ListRecorder()
    session = await browser.session(store)
    began = time.monotonic()
    try:
        result = await Episode(session=session, agent=builtin_agent("baseline-robust", think_seconds=0), task=task,
                               recorder=recorder, blobs=MemoryBlobs(), clock=time.monotonic,
                               max_seconds=seconds).run()
    finally:
        await session.close()
    return result, recorder, time.monotonic() - began


async def test_a_checkout_read_after_the_runs_seconds_is_a_time_limit_not_a_pass(
        browser: PlaywrightBrowser, slow_store: str) -> None:
    # The agent is at the order form's door well within 5 s; the form takes 6 s to load, so the judge reads it
    # after the run's 5 s are up.
    result, recorder, took = await _run(browser, slow_store, 5.0)
    assert isinstance(result, Verdict), result
    assert (result.passed, result.outcome) == (False, "time_limit"), (result, [s.result for s in recorder.steps])
    assert result.reason.startswith("no checkout within 5 seconds: the order form opened at ")
    assert result.reason.endswith(" s, after the limit") and result.order is None and result.receipt is None
    assert result.step == len(recorder.steps) and recorder.verdict == result  # the step is kept, the pass is not
    assert took >= SLOW_SECONDS


async def test_the_same_slow_checkout_within_the_runs_seconds_passes(
        browser: PlaywrightBrowser, slow_store: str) -> None:
    result, recorder, _ = await _run(browser, slow_store, 60.0)
    assert isinstance(result, Verdict) and result.passed and result.outcome == "passed", result
    assert recorder.verdict == result
