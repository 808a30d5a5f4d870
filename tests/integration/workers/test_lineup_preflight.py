"""Before Monday's line-up the scheduler asks each line-up model for one step through the gateway (a real local
server speaking the protocol), records the result as an event, and does not schedule a model the gateway cannot
serve that morning: it is shown as unavailable, not as a failure at every station."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import msgspec
import pytest

from adapters.models.check import as_result, check_lineup
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.lineup import ModelCheckResult
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer
from workers.ledger import RunLedger
from workers.plan import course_cells
from workers.schedule import catch_up

MONDAY_MORNING = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)  # 2026-W49
LUNA = WEEKLY[0]
HAIKU = msgspec.structs.replace(WEEKLY[1], route=f"{WEEKLY[1].route}-unavailable")  # the gateway answers 503


@pytest.fixture
def gateway() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    with build_runtime(settings, lambda: MONDAY_MORNING) as rt:
        yield rt


def test_a_model_the_gateway_cannot_serve_is_not_scheduled_and_the_check_is_recorded_once(
        runtime: Runtime, gateway: tuple[OpenAIServer, str]) -> None:
    fake, base = gateway
    entrants = {LUNA.model: LUNA, HAIKU.model: HAIKU}
    asked: list[list[str]] = []

    def preflight(models: Sequence[str]) -> list[ModelCheckResult]:
        asked.append(list(models))

        async def run() -> list[ModelCheckResult]:
            client = HttpxModelClient(base, "sk-test", timeout=5, attempts=2, backoff=0.05)
            try:
                return [as_result(c) for c in await check_lineup(
                    client, [entrants[m] for m in models if m in entrants])]
            finally:
                await client.aclose()

        return asyncio.run(run())

    models = [LUNA.model, HAIKU.model, "baseline-robust"]
    ledger = RunLedger(runtime.record)
    done = catch_up(runtime, ledger, MONDAY_MORNING, models=models, publish=None, preflight=preflight)
    assert done.unavailable == [HAIKU.model]
    assert len(done.lineup) == len(course_cells([LUNA.model, "baseline-robust"]))
    ledger.refresh()
    assert {r.model for r in ledger.runs.values()} == {LUNA.model, "baseline-robust"}

    events = [e for e in runtime.record.read_log(limit=10_000) if e.name == "LineUp.ModelsChecked"]
    assert len(events) == 1
    checked = runtime.record.lineup().checks["2026-W49"]
    assert [(c.model, c.available) for c in checked] == [(LUNA.model, True), (HAIKU.model, False)]
    assert "HTTP 503" in checked[1].problem and checked[0].resolved == "test"

    # A later tick the same week asks nobody again and still leaves the model out.
    calls = len(fake.requests)
    again = catch_up(runtime, ledger, MONDAY_MORNING, models=models, publish=None, preflight=preflight)
    assert again.unavailable == [HAIKU.model] and len(asked) == 1 and len(fake.requests) == calls
