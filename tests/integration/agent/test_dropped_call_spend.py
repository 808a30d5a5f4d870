"""A model call the run's time cuts off while its request is on its way may be charged for, and the provider tells
us nothing: the step records our estimate of the prompt we sent, marked estimated. On the real lab in real Chromium,
through a real local server speaking the OpenAI protocol whose model never answers, into a real record (SQLite)
through the worker's own recorder: the run ends at its time limit, its last step is the dropped call with our
estimate of its input tokens at the line-up's prices and the request kept as its exchange, the week's spend
(spend.json) counts it, and the run page says the cost is an estimate. A call still failing when the time runs out
is the connection's, as before (no step, nothing charged)."""

from __future__ import annotations

import json
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.models.agent import ModelAgent
from adapters.models.charges import IMAGE_TOKENS, prompt_tokens
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY, cost_usd
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.agent_ports import station_task
from domain.agent.episode import Episode
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]
LUNA = WEEKLY[0]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


async def test_a_call_the_time_limit_drops_in_flight_is_recorded_at_our_estimate_and_the_spend_counts_it(
        tmp_path: Path, server: tuple[OpenAIServer, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    fake, base = server
    hanging = msgspec.structs.replace(LUNA, route=f"{LUNA.route}-{uuid.uuid4().hex[:8]}-hang")
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4)
    task = station_task(load_course(), "s01", lab.url_for("s01"))
    with build_runtime(settings) as runtime:
        record = runtime.record
        week = week_of(record.clock())
        [run_id] = schedule_runs(record, [ScheduleRun.on_course(station="s01", model=LUNA.model,
                                                                requested_by="test", week=week)])
        recorder = runtime.recorder(run_id)
        await recorder.started(worker="test", browser_version="", agent_version=LUNA.route)
        # The call's own time-out (30 s) is far beyond the run's 4 s: it is in flight, not failing, when they end.
        client = HttpxModelClient(base, "sk-test", timeout=30, attempts=1)
        session = await browser.session(task.start_url)
        try:
            result = await Episode(session=session, agent=ModelAgent(client, hanging, runtime.blobs), task=task,
                                   recorder=recorder, blobs=runtime.blobs, clock=time.monotonic,
                                   max_seconds=4.0).run()
        finally:
            await session.close()
            await client.aclose()
        steps = [e.step for e in record.repository.event_store.get(run_id) if isinstance(e, Run.StepRecorded)]
        exchange = json.loads(runtime.blobs.get(steps[-1].exchange or "")) if steps else {}
        with TestClient(create_app(runtime.settings), base_url="https://testserver") as web:
            spend = web.get(f"/api/weeks/{week}/spend.json").json()
            page = " ".join(web.get(f"/runs/{run_id}").text.split())
    [sent] = [r for r in fake.requests if r["model"] == hanging.route]
    assert isinstance(result, Verdict) and result.outcome == "time_limit", result
    [dropped] = steps
    assert dropped.result == "invalid reply: no decision before the time limit" and dropped.action is None
    # The dropped call: our estimate of the prompt it sent (the screenshot with it), no output, at /agent's prices.
    assert dropped.estimated is True and dropped.tokens_out == 0
    assert dropped.tokens_in == prompt_tokens(sent) > IMAGE_TOKENS
    assert dropped.cost_usd == cost_usd(LUNA, dropped.tokens_in, 0) > 0
    assert exchange["request"]["model"] == hanging.route and exchange["response"] is None
    # The week's spend counts it, and the run page says it is our estimate.
    assert spend["actual_usd"] == round(dropped.cost_usd, 6) > 0
    assert "1 step</a> estimated: no usage reported" in page
    assert "Estimated cost: the provider reported no usage for this call" in page
