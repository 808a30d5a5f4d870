"""Time a model call spends waiting for a free place under our own limit on calls at once to its provider
(CANITBUY_PROVIDER_CONCURRENCY) is our throttling, not the model's time: against a real local server speaking the
protocol and a real gate with one place, the waiting call says how long it waited and its latency leaves the wait
out, and a run on the real lab in real Chromium does not count the wait in its seconds (it still records its wall
time), up to a bound past which the run is cut short as our error."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import msgspec
import pytest

from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.models.agent import ModelAgent
from adapters.models.client import CallState, HttpxModelClient
from adapters.models.lineup import WEEKLY
from adapters.models.throttle import ProviderGate
from domain.agent.agent_ports import ModelConnectionError, station_task
from domain.agent.episode import CutShort, Episode
from domain.agent.verdicts import CutShortCause, Verdict
from domain.courses.course import load_course
from lab.server import LabServer
from tests.integration.agent.fixed_gateways import provider_for
from tests.integration.agent.openai_server import OpenAIServer
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

pytestmark = pytest.mark.anyio
LUNA = WEEKLY[0]


@pytest.fixture(scope="module")
def server(lab: LabServer) -> Iterator[tuple[OpenAIServer, str]]:
    with provider_for(lab) as served:
        yield served


class TimedRecorder(ListRecorder):
    """The recorder of the tests, keeping the seconds the run recorded as it ended."""

    seconds: float | None = None

    async def finished(self, verdict: Verdict, *, steps: int, seconds: float) -> None:
        self.seconds = seconds
        await super().finished(verdict, steps=steps, seconds=seconds)

    async def cut_short(self, cause: CutShortCause, detail: str, *, steps: int, seconds: float) -> None:
        self.seconds = seconds
        await super().cut_short(cause, detail, steps=steps, seconds=seconds)


def one_place() -> ProviderGate:
    """Our limit at its tightest: one call at a time to each provider, in this process."""
    return ProviderGate(limits={"*": 1})


async def test_a_call_waiting_for_our_one_place_says_how_long_and_its_latency_leaves_the_wait_out(
        server: tuple[OpenAIServer, str]) -> None:
    fake, base = server
    client = HttpxModelClient(base, "sk-test", timeout=5, attempts=1, gate=one_place())
    first, second = CallState(), CallState()
    route = f"{LUNA.route}-sluggish"  # every answer takes 0.7 s
    try:
        replies = await asyncio.gather(client.complete({"model": route, "messages": []}, first),
                                       client.complete({"model": route, "messages": []}, second))
    finally:
        await client.aclose()
    assert fake.most_in_flight == 1
    assert first.waited == 0 and 0.6 <= second.waited < 2.0  # it waited out the first call's 0.7 s
    assert second.queued_at is None and second.failures == 0  # waiting for our place is no failure
    assert all(700 <= r.ms < 1400 for r in replies)  # each call's own 0.7 s, not the second's 1.4 s


async def _hold_the_place(base: str, gate: ProviderGate, seconds: float) -> None:
    """Another run's call to the same provider that takes the only place for `seconds` (then times out)."""
    holder = HttpxModelClient(base, "sk-test", timeout=seconds, attempts=1, gate=gate)
    try:
        await holder.complete({"model": f"{LUNA.route}-hang", "messages": []})
    except ModelConnectionError:
        pass
    finally:
        await holder.aclose()


Outcome = tuple[Verdict | CutShort, "TimedRecorder", float]


async def _run_behind(base: str, server: OpenAIServer, browser: PlaywrightBrowser, lab: LabServer, *,
                      hold: float, seconds: float, our_wait: float | None = None) -> Outcome:
    """A competent model's run on s01, whose calls share one place with a call that holds it for `hold` s."""
    gate = one_place()
    holding = asyncio.ensure_future(_hold_the_place(base, gate, hold))
    while server.in_flight == 0:  # the holder has the place and is at the server
        await asyncio.sleep(0.02)
    task = station_task(load_course(), "s01", lab.url_for("s01"))
    model = msgspec.structs.replace(LUNA, route=f"{LUNA.route}-plays-competent-{uuid.uuid4().hex[:8]}")
    client = HttpxModelClient(base, "sk-test", timeout=10, attempts=2, backoff=0.05, gate=gate)
    recorder = TimedRecorder()
    session = await browser.session(task.start_url)
    began = time.monotonic()
    try:
        result = await Episode(session=session, agent=ModelAgent(client, model, MemoryBlobs()), task=task,
                               recorder=recorder, blobs=MemoryBlobs(), clock=time.monotonic, max_seconds=seconds,
                               **({} if our_wait is None else {"max_our_wait": our_wait})).run()
    finally:
        took = time.monotonic() - began
        await session.close()
        await client.aclose()
        await holding
    return result, recorder, took


async def test_a_run_whose_first_call_waits_for_our_place_past_its_seconds_still_passes_on_its_own_time(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    # The run has 5 s; its first call waits about 7 s for the place another call holds. The model itself needs
    # about a second to pass s01: the wait is ours, so it is not counted and the run passes.
    fake, base = server
    result, recorder, took = await _run_behind(base, fake, browser, lab, hold=7.0, seconds=5.0)
    assert isinstance(result, Verdict) and result.outcome == "passed", (result, [s.result for s in recorder.steps])
    assert took >= 6.5 and recorder.verdict == result and recorder.cut is None
    assert recorder.seconds is not None and recorder.seconds >= 6.5  # the run records its wall time
    assert recorder.steps[0].model_ms < 3000  # the model's answer, not the wait for our place


async def test_a_run_our_throttle_holds_back_past_the_bound_is_cut_short_as_our_error(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    # 2 s of the run's own, and at most 1.5 s more of waiting for our place: the other call holds it for 8 s.
    fake, base = server
    result, recorder, took = await _run_behind(base, fake, browser, lab, hold=8.0, seconds=2.0, our_wait=1.5)
    assert isinstance(result, CutShort) and result.cause == "our_error", result
    assert "for a free place under our own limit on calls at once" in result.detail
    assert "more than the 1.5 s a run may wait beyond its 2 seconds: our error" in result.detail
    assert recorder.verdict is None and 3.4 <= took < 6
