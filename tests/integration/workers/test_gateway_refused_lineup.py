"""The scheduler's own model check (gateway_check) through a real local server that refuses our key (401) at
06:00 UTC and takes it at 14:00: the refusal is recorded as ours, no run of the line-up starts into a gateway that
refuses us, and once the key is taken the models run that afternoon, counted for the same week."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import msgspec
import pytest

from adapters.models.check import gateway_check
from adapters.models.lineup import WEEKLY
from adapters.settings import Settings
from adapters.wiring import Runtime
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer
from tests.integration.workers.clocked import Clock
from workers.ledger import RunLedger
from workers.plan import course_cells
from workers.schedule import catch_up

WEEK = "2026-W49"
MONDAY_0600 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
MONDAY_1400 = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
MODELS = [WEEKLY[0].model, WEEKLY[1].model]


@pytest.fixture
def answering() -> Iterator[str]:
    with ThreadedApp(OpenAIServer().app) as gate:
        yield f"{gate.url}/v1"


@pytest.fixture
def clock() -> Clock:
    """The line-up's own hour, 06:00 (the folder's runtime fixture is built on this clock)."""
    return Clock(MONDAY_0600)


def test_a_key_the_gateway_refuses_at_six_is_our_configuration_and_runs_the_week_once_it_is_taken(
        settings: Settings, runtime: Runtime, clock: Clock, refusing: str, answering: str) -> None:
    ledger = RunLedger(runtime.record)
    rejected = msgspec.structs.replace(settings, model_api_key="sk-rejected", model_base_url=refusing)
    morning = catch_up(runtime, ledger, MONDAY_0600, models=MODELS, publish=None,
                       preflight=gateway_check(rejected, timeout=5, backoff=0.05))
    assert morning.lineup == [] and morning.unavailable == MODELS
    lineup = runtime.record.lineup()
    assert lineup.refused(WEEK) == MODELS  # ours: the pages say so, not that the models could not be reached
    assert [(r.gateway_refused, r.problem) for r in lineup.checks[WEEK]] == [
        (True, "the gateway refused our request: HTTP 401")] * 2

    clock.now = MONDAY_1400
    fixed = msgspec.structs.replace(rejected, model_api_key="sk-fixed", model_base_url=answering)
    afternoon = catch_up(runtime, ledger, MONDAY_1400, models=MODELS, publish=None,
                         preflight=gateway_check(fixed, timeout=5, backoff=0.05))
    assert afternoon.unavailable == [] and len(afternoon.lineup) == len(course_cells(MODELS))
    assert runtime.record.lineup().refused(WEEK) == []
