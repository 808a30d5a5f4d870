"""A call the provider may charge for whose usage we cannot read is in the spend at our estimate, marked so. Through
the real executor, a real record (SQLite), the real lab over HTTP, real Chromium for the browser run and a real local
gateway answering every chat-completions call with an HTTP 200 whose body is not JSON (a page of HTML): each call
is recorded with our estimate of the prompt's input tokens (we know what we sent), no output tokens, priced at the
line-up's prices and marked estimated. The week's spend (spend.json) counts it, the weekly cap reached by it holds
the next model run, and the run page says the cost is an estimate. The Monday model check prices such a reply the
same way (one place turns a call into a cost: adapters/models/charges.py)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.models.charges import IMAGE_TOKENS, prompt_tokens
from adapters.models.check import check_lineup, report_lines
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY, cost_usd
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from web.app import create_app
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import build_resources

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

pytestmark = pytest.mark.anyio
LUNA = WEEKLY[0]
NOT_JSON = "<html><body><h1>Upstream answered</h1><p>Something went wrong on our side.</p></body></html>"


class NotJsonGateway:
    """A gateway that answers every call with a 200 in HTML, and keeps each request it was sent."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.answer, methods=["POST"])])

    async def answer(self, request: Request) -> Response:
        self.requests.append(json.loads(await request.body()))
        return Response(NOT_JSON, status_code=200, media_type="text/html")


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[NotJsonGateway, str]]:
    fake = NotJsonGateway()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


@pytest.mark.parametrize("station", [pytest.param("s01", marks=pytest.mark.chromium, id="browser"),
                                     pytest.param("s12", id="reader")])
async def test_a_reply_that_is_not_json_is_recorded_at_our_estimate_of_the_prompt_and_the_spend_counts_it(
    tmp_path: Path, gateway: tuple[NotJsonGateway, str], lab: LabServer, station: str
) -> None:
    fake, base = gateway
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4, model_base_url=base,
                        model_api_key="sk-test", weekly_cap_usd=0.000001)
    fake.requests.clear()
    with build_runtime(settings) as runtime:
        record = runtime.record
        week = week_of(record.clock())
        first, second = schedule_runs(record, [
            ScheduleRun.on_course(station=station, model=LUNA.model, requested_by="test", week=week, repeat=r)
            for r in (0, 1)])
        resources = build_resources(runtime, open_leases(settings), lab_url=lab.url_for(None), directory_url=None)
        ctx: dict[str, Any] = {"resources": resources}
        try:
            await execute_run(ctx, str(first))
            held = await execute_run(ctx, str(second))  # the estimated calls spent the cap
        finally:
            await resources.aclose()
        steps = [e.step for e in record.repository.event_store.get(first) if isinstance(e, Run.StepRecorded)]
        with TestClient(create_app(runtime.settings), base_url="https://testserver") as client:
            spend = client.get(f"/api/weeks/{week}/spend.json").json()
            page = " ".join(client.get(f"/runs/{first}").text.split())
            recording = client.get(f"/api/runs/{first}.json").json()
    sent = list(fake.requests)
    # One step a call, each with our estimate of the prompt it sent, no output, at the line-up's prices.
    assert steps and len(steps) == len(sent)
    for step, request in zip(steps, sent, strict=True):
        assert step.estimated is True and step.tokens_out == 0
        assert step.tokens_in == prompt_tokens(request) > (IMAGE_TOKENS if station == "s01" else 1000)
        assert step.cost_usd == cost_usd(LUNA, step.tokens_in, 0) > 0
    total = round(sum(s.cost_usd for s in steps), 6)
    # The week's spend counts the estimate, and the cap it reached holds the next run (still scheduled).
    assert spend["actual_usd"] == total and spend["cap_reached"] is True
    assert held.startswith("skipped: weekly spending cap reached")
    assert all(s["estimated"] is True for s in recording["steps"])
    # The run page says the cost is our estimate, on the run and on each step.
    assert f"{len(steps)} {'step' if len(steps) == 1 else 'steps'}</a> estimated: no usage reported" in page
    assert "Estimated cost: the provider reported no usage for this call" in page


async def test_the_model_check_prices_a_reply_that_is_not_json_at_our_estimate(
        gateway: tuple[NotJsonGateway, str]) -> None:
    fake, base = gateway
    fake.requests.clear()
    client = HttpxModelClient(base, "sk-test", timeout=5, attempts=1)
    try:
        [check] = await check_lineup(client, [LUNA])
    finally:
        await client.aclose()
    [request] = fake.requests
    assert check.available and check.problem.startswith("unusable reply")
    assert check.cost_estimated and check.cost_usd == cost_usd(LUNA, prompt_tokens(request), 0) > 0
    assert report_lines([check])[0].endswith(f"${check.cost_usd:.6f} (estimated)")
