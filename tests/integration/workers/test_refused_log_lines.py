"""The scheduler's log says whose fault a model left out is: a gateway that refuses our key (401, a real local
server) is our configuration, at the morning check and at the afternoon's, never "the gateway could not reach them";
a model the gateway cannot reach (503 on every call) is still said to be unreachable."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import msgspec
import pytest

from adapters.models.check import gateway_check
from adapters.models.lineup import WEEKLY
from adapters.settings import Settings
from adapters.wiring import Runtime
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.fixed_gateways import answering_every_call
from tests.integration.workers.clocked import Clock
from workers.ledger import RunLedger
from workers.schedule import catch_up

MONDAY_0600 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
MONDAY_1400 = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
MODELS = [WEEKLY[0].model, WEEKLY[1].model]


@pytest.fixture
def clock() -> Clock:
    return Clock(MONDAY_0600)


def _said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "canitbuy.schedule" and r.levelno >= logging.WARNING]


def test_models_the_gateway_refused_are_logged_as_our_configuration_morning_and_afternoon(
        settings: Settings, runtime: Runtime, clock: Clock, refusing: str, caplog: pytest.LogCaptureFixture) -> None:
    ledger = RunLedger(runtime.record)
    rejected = msgspec.structs.replace(settings, model_api_key="sk-rejected", model_base_url=refusing)
    with caplog.at_level(logging.INFO):
        catch_up(runtime, ledger, MONDAY_0600, models=MODELS, publish=None,
                 preflight=gateway_check(rejected, timeout=5, backoff=0.05))
    [morning] = _said(caplog)
    assert morning == (f"2026-W49: not scheduled this morning, the gateway refused our request for them: our "
                       f"configuration (key, credits or route), not the models (checked again at 14:00 UTC): "
                       f"{MODELS[0]} (HTTP 401); {MODELS[1]} (HTTP 401)")
    caplog.clear()
    clock.now = MONDAY_1400
    with caplog.at_level(logging.INFO):
        catch_up(runtime, ledger, MONDAY_1400, models=MODELS, publish=None,
                 preflight=gateway_check(rejected, timeout=5, backoff=0.05))
    [afternoon] = _said(caplog)
    assert afternoon == ("2026-W49: the gateway refused our request for them at the afternoon check too: our "
                         "configuration (key, credits or route), not the models; no place this week: "
                         f"{MODELS[0]} (HTTP 401); {MODELS[1]} (HTTP 401)")


def test_models_the_gateway_could_not_reach_are_still_logged_as_unreachable(
        settings: Settings, runtime: Runtime, clock: Clock, caplog: pytest.LogCaptureFixture) -> None:
    unavailable = answering_every_call({"error": {"message": "upstream unavailable"}}, status=503)
    with ThreadedApp(unavailable) as gate, caplog.at_level(logging.INFO):
        down = msgspec.structs.replace(settings, model_api_key="sk-test", model_base_url=f"{gate.url}/v1")
        catch_up(runtime, RunLedger(runtime.record), MONDAY_0600, models=MODELS, publish=None,
                 preflight=gateway_check(down, timeout=5, backoff=0.05, attempts=2))
    [morning] = _said(caplog)
    assert morning == ("2026-W49: not scheduled this morning, the gateway could not reach them (checked again at "
                       f"14:00 UTC): {', '.join(MODELS)}")
