"""The OpenAI-compatible client against a real local HTTP server speaking the protocol."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import msgspec
import pytest

from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.models.agent import ModelAgent
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY, cost_usd
from adapters.models.reader import ModelReader
from adapters.models.replies import BudgetCutError
from domain.agent.actions import Click
from domain.agent.agent_ports import ModelConnectionError, station_task
from domain.agent.episode import CutShort, Episode
from domain.agent.judge import judge_answer
from domain.agent.lineup import Entrant
from domain.agent.observation import Observation
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import READ_ANSWER, OpenAIServer, read_reply
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

pytestmark = pytest.mark.anyio
KEY = "sk-test-never-recorded"
LUNA = WEEKLY[0]


def model(behaviour: str) -> Entrant:
    return msgspec.structs.replace(LUNA, route=f"{LUNA.route}-{behaviour}")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


def client(base: str, **options: float) -> HttpxModelClient:
    return HttpxModelClient(base, KEY, **{"timeout": 5.0, "attempts": 3, "backoff": 0.05, **options})


async def observe(browser: PlaywrightBrowser, url: str) -> Observation:
    session = await browser.session(url)
    await session.open(url)
    observation = await session.observe()
    await session.close()
    return observation


async def test_a_valid_reply_is_an_action_with_tokens_cost_and_the_exchange_recorded(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    fake, base = server
    blobs = MemoryBlobs()
    observation = await observe(browser, lab.url_for("s01"))
    task = station_task(load_course(), "s01", lab.url_for("s01"))
    decision = await ModelAgent(client(base), model("valid"), blobs).decide(observation, task, [])
    assert isinstance(decision.action, Click) and observation.element(decision.action.id) is not None
    assert (decision.tokens_in, decision.tokens_out) == (1200, 30)
    assert decision.cost_usd == cost_usd(LUNA, 1200, 30) > 0
    sent = fake.requests[-1]
    assert sent["tools"][0]["function"]["name"] == "act"
    image = sent["messages"][1]["content"][1]["image_url"]["url"]
    assert image.startswith("data:image/jpeg;base64,")
    assert fake.headers[-1]["authorization"] == f"Bearer {KEY}"
    exchange = next(iter(blobs.data.values()))
    assert KEY.encode() not in exchange and json.loads(exchange)["response"]["usage"]["prompt_tokens"] == 1200


async def test_a_malformed_reply_costs_a_step_and_is_recorded(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    _, base = server
    task = station_task(load_course(), "s01", lab.url_for("s01"))
    recorder = ListRecorder()
    session = await browser.session(task.start_url)
    try:
        verdict = await Episode(session=session, agent=ModelAgent(client(base), model("malformed"), MemoryBlobs()),
                                task=task, recorder=recorder, blobs=MemoryBlobs(), clock=time.monotonic,
                                max_steps=2).run()
    finally:
        await session.close()
    assert not isinstance(verdict, CutShort) and verdict.outcome == "step_limit"
    assert [s.result for s in recorder.steps] == ["invalid reply: the reply holds neither a tool call nor JSON"] * 2
    assert all(s.action is None and s.tokens_in == 1200 for s in recorder.steps)


async def test_429_is_retried_after_the_time_it_asks_for(server: tuple[OpenAIServer, str]) -> None:
    fake, base = server
    began = time.monotonic()
    reply = await client(base).complete({"model": model("flaky").route, "messages": []})
    assert reply.attempts == 2 and fake.flaky_calls == 2
    assert time.monotonic() - began >= 1.0  # Retry-After: 1


async def test_a_model_that_keeps_timing_out_raises_a_connection_error(server: tuple[OpenAIServer, str]) -> None:
    _, base = server
    with pytest.raises(ModelConnectionError, match="after 2 attempts"):
        await client(base, timeout=0.3, attempts=2).complete({"model": model("slow").route, "messages": []})


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_dead_endpoint_cuts_the_run_short_for_model_connection(
        browser: PlaywrightBrowser, lab: LabServer) -> None:
    task = station_task(load_course(), "s01", lab.url_for("s01"))
    recorder = ListRecorder()
    agent = ModelAgent(client(f"http://127.0.0.1:{dead_port()}/v1"), LUNA, MemoryBlobs())
    session = await browser.session(task.start_url)
    try:
        result = await Episode(session=session, agent=agent, task=task, recorder=recorder, blobs=MemoryBlobs(),
                               clock=time.monotonic).run()
    finally:
        await session.close()
    assert isinstance(result, CutShort) and result.cause == "model_connection"
    assert recorder.cut is not None and recorder.cut[0] == "model_connection" and recorder.verdict is None


async def test_the_model_reader_answers_s12_from_pages_fetched_without_javascript(
        server: tuple[OpenAIServer, str], lab: LabServer) -> None:
    fake, base = server
    task = station_task(load_course(), "s12", lab.url_for("s12"))
    result = await ModelReader(client(base), model("reader"), MemoryBlobs()).read(task)
    assert judge_answer(result.answer).passed and result.tokens_in == 1200
    prompt = fake.requests[-1]["messages"][1]["content"]
    assert "Delivery costs $9.99" in prompt and "Returns within 30 days" in prompt
    assert fake.requests[-1]["response_format"]["type"] == "json_schema"


async def run_for(base: str, behaviour: str, browser: PlaywrightBrowser, lab: LabServer, *, seconds: float,
                  **options: float) -> tuple[Verdict | CutShort, ListRecorder, float]:
    """One s01 run of a model on the real lab, with a short time limit (the episode's limit is injectable)."""
    task = station_task(load_course(), "s01", lab.url_for("s01"))
    recorder = ListRecorder()
    agent = ModelAgent(client(base, **options), model(behaviour), MemoryBlobs())
    session = await browser.session(task.start_url)
    began = time.monotonic()
    try:
        result = await Episode(session=session, agent=agent, task=task, recorder=recorder, blobs=MemoryBlobs(),
                               clock=time.monotonic, max_seconds=seconds).run()
    finally:
        await session.close()
    return result, recorder, time.monotonic() - began


async def test_a_model_endpoint_that_hangs_is_cut_short_for_model_connection_not_a_time_limit(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    # Each attempt times out after 0.4 s and is retried; the run's 4 s run out while the call is still failing.
    # (The budget counts from the run's start: under a loaded machine, opening and reading the page took 2 s.)
    _, base = server
    result, recorder, took = await run_for(base, "hang", browser, lab, seconds=4.0, timeout=0.4, attempts=50)
    assert isinstance(result, CutShort) and result.cause == "model_connection", result
    assert "ran out while the model call was failing" in result.detail and "ReadTimeout" in result.detail
    assert recorder.verdict is None and recorder.cut is not None and recorder.cut[0] == "model_connection"
    assert took < 8


async def test_a_model_endpoint_answering_503_is_cut_short_for_model_connection_not_a_time_limit(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    # The first 503 must come back before the time runs out, or nothing is known to be failing yet: 4 s leave
    # room for a loaded machine's slow page open (2 s was seen to run out before the first call was answered).
    _, base = server
    result, recorder, _ = await run_for(base, "unavailable", browser, lab, seconds=4.0, attempts=50, backoff=0.2)
    assert isinstance(result, CutShort) and result.cause == "model_connection", result
    assert "HTTP 503" in result.detail and recorder.verdict is None


async def test_a_model_that_answers_every_call_too_slowly_runs_out_of_time(
        server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    # 0.7 s a call, every call answered: the time is the model's, so the run is a real time_limit result.
    _, base = server
    result, recorder, _ = await run_for(base, "sluggish", browser, lab, seconds=2.5)
    assert isinstance(result, Verdict) and result.outcome == "time_limit" and not result.passed, result
    assert recorder.cut is None and recorder.verdict == result
    answered = [s for s in recorder.steps if s.tokens_in == 1200]
    assert answered and all(s.model_ms >= 700 for s in answered)


async def test_the_model_reader_reads_each_fact_on_its_own_so_one_mistyped_fact_leaves_four_right(
        server: tuple[OpenAIServer, str], lab: LabServer) -> None:
    _, base = server
    task = station_task(load_course(), "s12", lab.url_for("s12"))
    result = await ModelReader(client(base), model("typoreader"), MemoryBlobs()).read(task)
    verdict = judge_answer(result.answer, pages=result.fetched)
    assert verdict.passed and verdict.facts_right == 4, verdict.reason
    assert [(g.fact, g.given) for g in verdict.facts if not g.right] == [("return_days", None)]
    assert "facts that could not be read: return_days" in result.notes


async def test_a_read_answer_cut_by_our_token_limit_is_our_error_as_for_the_browser_agent(
        server: tuple[OpenAIServer, str], lab: LabServer) -> None:
    fake, base = server
    task = station_task(load_course(), "s12", lab.url_for("s12"))
    reader = model("cutreader")
    blobs = MemoryBlobs()
    with pytest.raises(BudgetCutError, match=f"cut by our limit of {reader.max_tokens} completion tokens") as cut:
        await ModelReader(client(base), reader, blobs).read(task)
    assert fake.requests[-1]["max_tokens"] == reader.max_tokens
    spent = cut.value.spent  # charged all the same: the run records it as its step
    assert spent is not None and spent.exchange in blobs.data
    assert (spent.tokens_in, spent.tokens_out) == (1200, reader.max_tokens)
    assert spent.cost_usd == cost_usd(reader, 1200, reader.max_tokens)


async def test_the_model_reader_takes_the_gateways_reported_cost_as_the_browser_agent_does(
        server: tuple[OpenAIServer, str], lab: LabServer) -> None:
    fake, base = server
    reported = read_reply(READ_ANSWER)
    reported["usage"] = {**reported["usage"], "cost": 0.00123}
    fake.reply_to_all = reported
    try:
        task = station_task(load_course(), "s12", lab.url_for("s12"))
        result = await ModelReader(client(base), model("reader"), MemoryBlobs()).read(task)
    finally:
        fake.reply_to_all = None
    assert result.cost_usd == 0.00123 != cost_usd(LUNA, result.tokens_in, result.tokens_out)
