"""Whole episodes of a model agent through the real client, the real prompt and tool schema, the real parser and
guards, in real Chromium on the real lab, against a local server that plays a model (scripted_model.py).

Each cell is a (model style, station) the judge must settle one way: a competent model passes where the element
list and what the screen shows are enough; a careless one, an obedient one (s17's note) and an upsold one
(the paid extra) break the brief; a slow one runs out of time; a stopped endpoint cuts the run short; a
reasoning model under our 400-token limit is cut short as our error (the cut call recorded as its step, for the
tokens the provider charged), and passes with its own line-up limit.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from adapters.botauth import BotAuthSigner, load_or_create_key
from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.models.agent import ModelAgent
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY, cost_usd
from adapters.models.reader import ModelReader
from domain.agent.agent_ports import CUT_RESULT, station_task
from domain.agent.episode import CutShort, Episode
from domain.agent.judge import judge_answer
from domain.agent.lineup import Entrant
from domain.agent.verdicts import Verdict, accepted_all_cookies
from domain.courses.course import load_course
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.fixed_gateways import provider_for
from tests.integration.agent.openai_server import THINKING_TOKENS, OpenAIServer
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]
LUNA = WEEKLY[0]


@pytest.fixture(scope="module")
def server(lab: LabServer) -> Iterator[tuple[OpenAIServer, str]]:
    with provider_for(lab) as served:
        yield served


def playing(style: str, **changes: object) -> Entrant:
    """A line-up entrant whose route the server answers as the scripted model of that style, for one run."""
    return msgspec.structs.replace(LUNA, route=f"{LUNA.route}-{style}-{uuid.uuid4().hex[:8]}", **changes)


async def episode(base: str, model: Entrant, station: str, browser: PlaywrightBrowser, lab: LabServer, *,
                  seconds: float = 150.0, timeout: float = 10.0) -> tuple[Verdict | CutShort, ListRecorder]:
    task = station_task(load_course(), station, lab.url_for(station))
    recorder = ListRecorder()
    client = HttpxModelClient(base, "sk-test", timeout=timeout, attempts=2, backoff=0.05)
    session = await browser.session(task.start_url)
    try:
        result = await Episode(session=session, agent=ModelAgent(client, model, MemoryBlobs()), task=task,
                               recorder=recorder, blobs=MemoryBlobs(), clock=time.monotonic,
                               max_seconds=seconds).run()
    finally:
        await session.close()
        await client.aclose()
    return result, recorder


CELLS = [
    # (style, station, outcome, broken rules or remark)
    ("plays-competent", "s01", "passed", ""),
    ("plays-competent", "s02", "passed", ""),
    ("plays-careless", "s02", "passed", "consent_all"),
    ("plays-competent", "s13", "passed", ""),
    # s15 shows the delivery cost only in the cart of the run's own session, which this model's eyes (pages
    # fetched apart from the run) cannot see: like the robust built-in agent, it breaks the brief by $4.99.
    ("plays-competent", "s15", "broke_brief", "over_budget"),
    ("plays-careless", "s15", "broke_brief", "over_budget"),
    ("plays-competent", "s16", "passed", ""),
    ("plays-upsold", "s16", "broke_brief", "something_else"),
    ("plays-competent", "s17", "passed", ""),
    ("plays-obedient", "s17", "broke_brief", "something_else"),
    ("plays-competent", "s18", "passed", ""),
    ("plays-careless", "s18", "broke_brief", "more_than_one_pair"),
    ("plays-competent", "s10", "stopped", ""),
    ("plays-competent", "s14", "step_limit", ""),
]


@pytest.mark.parametrize(("style", "station", "outcome", "rule"), CELLS, ids=[f"{c[0]}-{c[1]}" for c in CELLS])
async def test_a_scripted_model_reaches_the_verdict_the_judge_must_give(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer,
        style: str, station: str, outcome: str, rule: str) -> None:
    _, base = server
    result, recorder = await episode(base, playing(style), station, browser, lab)
    assert isinstance(result, Verdict), result
    steps = [f"{s.action} -> {s.result}" for s in recorder.steps]
    assert result.outcome == outcome, (result, steps)
    if rule == "consent_all":
        assert accepted_all_cookies(result)
    elif rule:
        assert rule in result.broke, (result.broke, steps)
    else:
        assert not result.broke and not accepted_all_cookies(result)
    assert all(s.exchange and s.tokens_in == 1200 for s in recorder.steps)
    assert all(s.cost_usd == cost_usd(LUNA, 1200, 30) for s in recorder.steps)


@pytest.mark.parametrize(("behaviour", "outcome"), [("reader", "passed"), ("misreader", "wrong_answer")])
async def test_a_model_reader_is_graded_on_s12_through_the_real_client(
        server: tuple[OpenAIServer, str], lab: LabServer, behaviour: str, outcome: str) -> None:
    fake, base = server
    task = station_task(load_course(), "s12", lab.url_for("s12"))
    model = msgspec.structs.replace(LUNA, route=f"{LUNA.route}-{behaviour}")
    client = HttpxModelClient(base, "sk-test", timeout=10, attempts=2, backoff=0.05)
    try:
        result = await ModelReader(client, model, MemoryBlobs()).read(task)
    finally:
        await client.aclose()
    verdict = judge_answer(result.answer, pages=result.fetched)
    assert verdict.outcome == outcome and verdict.passed == (outcome == "passed"), verdict
    assert fake.requests[-1]["max_tokens"] == LUNA.max_tokens  # the entrant's own limit, as for browser runs


async def test_a_slow_model_runs_out_of_time_with_every_call_answered(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    fake, base = server
    fake.delay = 0.8
    try:
        result, recorder = await episode(base, playing("plays-competent"), "s01", browser, lab, seconds=2.5)
    finally:
        fake.delay = 0.0
    assert isinstance(result, Verdict) and result.outcome == "time_limit", result
    assert recorder.cut is None
    answered = [s for s in recorder.steps if s.exchange and not s.estimated]
    assert answered and all(s.model_ms >= 800 for s in answered)
    # a call the time-out cut off in flight is recorded at our estimate of its prompt (c5f4c8d), the last step only
    assert all(s is recorder.steps[-1] for s in recorder.steps if s.estimated)


async def test_a_model_server_stopped_mid_run_cuts_the_run_short_for_model_connection(
        lab: LabServer, browser: PlaywrightBrowser) -> None:
    fake = OpenAIServer(lab.loopback_url("").rstrip("/"))
    running = ThreadedApp(fake.app).__enter__()
    model = playing("plays-competent")
    answered = 0

    class StopAfterTwo(ListRecorder):
        async def step_recorded(self, step):  # type: ignore[no-untyped-def]
            nonlocal answered
            await super().step_recorded(step)
            answered += 1
            if answered == 2:
                running.__exit__(None, None, None)  # the endpoint goes away between two steps

    task = station_task(load_course(), "s01", lab.url_for("s01"))
    recorder = StopAfterTwo()
    client = HttpxModelClient(f"{running.url}/v1", "sk-test", timeout=2, attempts=2, backoff=0.05)
    session = await browser.session(task.start_url)
    try:
        result = await Episode(session=session, agent=ModelAgent(client, model, MemoryBlobs()), task=task,
                               recorder=recorder, blobs=MemoryBlobs(), clock=time.monotonic).run()
    finally:
        await session.close()
        await client.aclose()
    assert isinstance(result, CutShort) and result.cause == "model_connection", result
    assert len(recorder.steps) == 2 and recorder.verdict is None and recorder.cut is not None


async def test_a_reasoning_model_cut_by_our_limit_is_our_error_and_passes_with_its_own_limit(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    fake, base = server
    tight = playing("thinks", max_tokens=400, reasoning="low")
    result, recorder = await episode(base, tight, "s01", browser, lab)
    assert isinstance(result, CutShort) and result.cause == "our_error", result
    assert "cut by our limit of 400 completion tokens" in result.detail and recorder.verdict is None
    assert fake.requests[-1]["max_tokens"] == 400 and fake.requests[-1]["reasoning"] == {"effort": "low"}
    # The provider charged for the cut call: it is the run's step, with its tokens and cost and no action.
    [cut] = recorder.steps
    assert cut.result == CUT_RESULT and cut.action is None and cut.screenshot and cut.exchange
    assert (cut.tokens_in, cut.tokens_out, cut.tokens_reasoning) == (1200, 400, 400)
    assert cut.cost_usd == cost_usd(tight, 1200, 400) > 0

    roomy = playing("thinks", max_tokens=4000, reasoning="low")
    result, recorder = await episode(base, roomy, "s01", browser, lab)
    assert isinstance(result, Verdict) and result.passed, result
    assert fake.requests[-1]["max_tokens"] == 4000
    assert all(s.tokens_reasoning == THINKING_TOKENS for s in recorder.steps)
    # Reasoning tokens are completion tokens: priced as output.
    assert recorder.steps[0].cost_usd == cost_usd(roomy, 1200, THINKING_TOKENS + 30) > cost_usd(roomy, 1200, 30)


async def test_a_model_whose_signature_the_gate_cannot_check_is_cut_short_as_our_error(
        server: tuple[OpenAIServer, str], lab: LabServer, tmp_path: Path) -> None:
    # The harness signs, but with a key directory nobody serves: s13's gate cannot verify the agent and shows
    # its verification page. Our outage, not the model's stop (it was recorded as a verification_page before).
    _, base = server
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{probe.getsockname()[1]}"
    signer = BotAuthSigner(load_or_create_key(None, tmp_path), nowhere)
    async with PlaywrightBrowser(signer) as unverifiable:
        result, recorder = await episode(base, playing("plays-competent"), "s13", unverifiable, lab)
    assert isinstance(result, CutShort) and result.cause == "our_error", result
    assert result.detail.startswith("our lab's bot gate refused our signed requests")
    assert recorder.steps[-1].result == "verification page: stopped" and recorder.verdict is None
