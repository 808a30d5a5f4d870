"""A gateway that refuses our request (an HTTP 4xx: a rejected key, no credits, an unknown route) against a real local
server: our configuration's error, never the model's nor its connection's. The call is not retried, a run is cut
short as our error naming the status, and the model check says the refusal is ours instead of calling the model
unavailable."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import msgspec
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse

from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.models.agent import ModelAgent
from adapters.models.check import as_result, check_lineup, report_lines
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY
from domain.agent.agent_ports import GatewayRefusalError, ModelConnectionError, station_task
from domain.agent.episode import CutShort, Episode
from domain.agent.lineup import Entrant
from domain.courses.course import load_course
from lab.server import LabServer
from ops.cli import main
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.fixed_gateways import INVALID_KEY, answering_every_call, gateway_named
from tests.integration.agent.openai_server import OpenAIServer
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs

LUNA, HAIKU = WEEKLY[0], WEEKLY[1]


class RefusingGateway(OpenAIServer):
    """The fake provider, but a route ending in -refuses-NNN is answered with that status, as a gateway answers a
    rejected key (401), no credits (402), a forbidden route (403) or an unknown one (404)."""

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        refused = re.search(r"-refuses-(\d{3})$", body["model"])
        if refused is None:
            return await super()._complete(request)  # Starlette keeps the body it read
        self.requests.append(body)
        status = int(refused.group(1))
        return JSONResponse({"error": {"message": f"refused with {status}"}}, status_code=status)


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[RefusingGateway, str]]:
    fake = RefusingGateway()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


def refusing(entrant: Entrant, status: int) -> Entrant:
    return msgspec.structs.replace(entrant, route=f"{entrant.route}-refuses-{status}")


def client(base: str) -> HttpxModelClient:
    return HttpxModelClient(base, "sk-test", timeout=5, attempts=3, backoff=0.05)


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 422])
async def test_a_4xx_is_the_gateway_refusing_our_request_and_it_is_asked_once(
        gateway: tuple[RefusingGateway, str], status: int) -> None:
    fake, base = gateway
    route = refusing(LUNA, status).route
    models = client(base)
    try:
        with pytest.raises(GatewayRefusalError) as refused:
            await models.complete({"model": route, "messages": []})
    finally:
        await models.aclose()
    assert str(refused.value) == f"the gateway refused our request: HTTP {status}" and refused.value.status == status
    assert not isinstance(refused.value, ModelConnectionError)
    assert [r["model"] for r in fake.requests].count(route) == 1  # not retried: asking again changes nothing


@pytest.mark.anyio
async def test_a_5xx_it_does_not_retry_is_still_the_connections(gateway: tuple[RefusingGateway, str]) -> None:
    _, base = gateway
    models = client(base)
    try:
        with pytest.raises(ModelConnectionError, match="HTTP 501"):
            await models.complete({"model": refusing(LUNA, 501).route, "messages": []})
    finally:
        await models.aclose()


@pytest.mark.anyio
async def test_a_run_whose_call_the_gateway_refuses_is_cut_short_as_our_error_naming_the_status(
        gateway: tuple[RefusingGateway, str], browser: PlaywrightBrowser, lab: LabServer) -> None:
    _, base = gateway
    task = station_task(load_course(), "s01", lab.url_for("s01"))
    recorder = ListRecorder()
    models = client(base)
    session = await browser.session(task.start_url)
    try:
        result = await Episode(session=session, agent=ModelAgent(models, refusing(LUNA, 401), MemoryBlobs()),
                               task=task, recorder=recorder, blobs=MemoryBlobs(), clock=time.monotonic).run()
    finally:
        await session.close()
        await models.aclose()
    assert result == CutShort("our_error", "the gateway refused our request: HTTP 401")
    assert recorder.cut == ("our_error", "the gateway refused our request: HTTP 401") and recorder.verdict is None
    assert recorder.steps == []  # nothing was answered, so nothing was charged


@pytest.mark.anyio
async def test_the_model_check_calls_a_refusal_our_configuration_not_the_model_unavailable(
        gateway: tuple[RefusingGateway, str]) -> None:
    _, base = gateway
    models = client(base)
    try:
        ok, refused, down = await check_lineup(models, [LUNA, refusing(HAIKU, 402),
                                                        msgspec.structs.replace(WEEKLY[2], route="x/y-unavailable")])
    finally:
        await models.aclose()
    assert ok.passed and not ok.gateway_refused
    assert refused.gateway_refused and not refused.available and not refused.passed
    assert refused.problem == "the gateway refused our request: HTTP 402"
    assert down.problem.endswith("(HTTP 503)") and not down.gateway_refused  # a failed connection stays one
    recorded = as_result(refused)
    assert recorded.gateway_refused and not recorded.available and "HTTP 402" in recorded.problem
    lines = report_lines([ok, refused, down])
    assert "REFUSED OUR REQUEST (HTTP 402: our configuration, the key, credits or route, not the model" in lines[1]
    assert "NOT AVAILABLE" not in lines[1] and "NOT AVAILABLE" in lines[2]


def test_the_command_exits_1_saying_the_gateway_refused_our_key_not_that_the_models_are_unavailable(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A gateway that answers every call 401, as it answers a rejected key."""
    with gateway_named(monkeypatch, answering_every_call(INVALID_KEY, status=401), "sk-rejected"):
        assert main(["models", "check", "--model", LUNA.model, "--model", HAIKU.model, "--timeout", "5"]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == (f"canitbuy: 2 of 2 models failed the check: {LUNA.model}, {HAIKU.model} (the "
                                    "gateway refused our request: our configuration, not the model)")
    assert "NOT AVAILABLE" not in captured.out and captured.out.count("REFUSED OUR REQUEST (HTTP 401") == 2
