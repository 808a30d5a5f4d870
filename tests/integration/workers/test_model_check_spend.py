"""The Monday model check's calls are charged, so they are in the week's spend and its cap, apart from the runs. The
scheduler's own check (gateway_check) at 06:00 UTC through a real local server speaking the OpenAI protocol, on each
backend: spend.json names what the checks cost (checks_usd) and counts it in actual_usd and projected_usd and
against the cap, which then holds the week's first model run; no model's runs count it, and the cost chart says it
apart. A check recorded before checks counted (no in_spend in its stored payload) leaves its week's spend.json
byte for byte as it was."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

import anyio
import msgspec
import pytest

from adapters.models.check import gateway_check
from adapters.models.lineup import WEEKLY, cost_usd, estimated_run_usd, is_flagship
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.eventlog.schema import Envelope, payload_decoder
from domain.projections.charts import CostChart
from domain.projections.spend import SpendFold
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import USAGE, OpenAIServer
from web.app import create_app
from web.public.charts import describe_cost
from workers.executor import spend_hold
from workers.leases import open_leases
from workers.ledger import RunLedger
from workers.resources import build_resources
from workers.schedule import catch_up

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

WEEK = "2026-W49"
MONDAY_0600 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
LUNA, HAIKU = WEEKLY[0], WEEKLY[1]
CHECKS = round(sum(cost_usd(e, USAGE["prompt_tokens"], USAGE["completion_tokens"]) for e in (LUNA, HAIKU)), 6)


@pytest.fixture
def gateway() -> Iterator[str]:
    with ThreadedApp(OpenAIServer().app) as running:
        yield f"{running.url}/v1"


@pytest.fixture
def capped(settings: Settings, gateway: str) -> Settings:
    """A cap the two checks' calls reach on their own, and a key for the gateway."""
    return msgspec.structs.replace(settings, weekly_cap_usd=round(CHECKS * 0.9, 6), model_base_url=gateway,
                                   model_api_key="sk-test")


@pytest.fixture
def runtime(capped: Settings) -> Iterator[Runtime]:
    with build_runtime(capped, lambda: MONDAY_0600) as rt:
        yield rt


def test_the_mondays_check_calls_are_in_the_weeks_spend_and_its_cap_apart_from_the_runs(
        runtime: Runtime, capped: Settings) -> None:
    morning = catch_up(runtime, RunLedger(runtime.record), MONDAY_0600, models=[LUNA.model, HAIKU.model],
                       publish=None, preflight=gateway_check(capped, timeout=5, backoff=0.05))
    assert morning.unavailable == [] and morning.lineup  # both answered, so both are scheduled
    checked = runtime.record.lineup().checks[WEEK]
    assert round(sum(r.cost_usd for r in checked), 6) == CHECKS > 0
    with TestClient(create_app(capped), base_url="https://testserver") as client:
        spend = client.get(f"/api/weeks/{WEEK}/spend.json").json()
    # The checks are the week's spend so far, shown apart, and the cap they reached holds the first model run.
    assert spend["checks_usd"] == CHECKS and spend["actual_usd"] == CHECKS and spend["cap_reached"] is True
    assert "flagship_checks_usd" not in spend  # no flagship model was checked
    runs_to_start = sum(m["runs_to_start"] for m in spend["models"])
    expected = CHECKS + sum(m["runs_to_start"] * estimated_run_usd(m["model"]) for m in spend["models"])
    assert runs_to_start == len(morning.lineup) and spend["projected_usd"] == pytest.approx(expected, abs=1e-5)
    assert all(m["actual_usd"] == 0.0 for m in spend["models"])  # no model's runs cost anything yet
    res = build_resources(runtime, open_leases(capped), lab_url="http://127.0.0.1:9", directory_url=None)
    first = runtime.record.get_run(morning.lineup[0])
    assert anyio.run(spend_hold, {"resources": res}, res, first) == (
        f"weekly spending cap reached (${CHECKS:.2f} of ${capped.weekly_cap_usd:.2f})")
    # The cost chart, drawn from the same spend, says the checks apart from the cost per run.
    assert describe_cost(CostChart(chart="cost", week=WEEK, rows=[], checks_usd=CHECKS)).endswith(
        f"the week's model checks (one call a model before the line-up) cost ${CHECKS:.4f}, counted in the "
        "week's spend, not per run.")


def _checked(state: bytes) -> Envelope:
    return Envelope(1, "lineup", 2, "LineUp.ModelsChecked", payload_decoder("LineUp.ModelsChecked").decode(state))


def test_a_check_recorded_before_checks_counted_leaves_its_weeks_spend_as_it_was() -> None:
    def spend_json(fold: SpendFold) -> bytes:
        return msgspec.json.encode(fold.week(WEEK, cap_usd=0.01, estimate=estimated_run_usd, flagship=is_flagship))

    result = (b'{"model":"gpt-6-luna","available":true,"resolved":"test","ms":120,"cost_usd":0.00036,'
              b'"problem":""}')
    before = b'{"timestamp":"2026-11-30T06:00:00+00:00","week":"2026-W49","results":[' + result + b'],"attempt":1}'
    now = before[:-1] + b',"in_spend":true}'
    untouched, old, new = SpendFold.empty(), SpendFold.empty(), SpendFold.empty()
    old.apply([_checked(before)])
    new.apply([_checked(now)])
    assert spend_json(old) == spend_json(untouched)  # the bytes that week's spend.json had
    assert b'"checks_usd":0.00036' in spend_json(new) and old.actual(WEEK) == 0.0 and new.actual(WEEK) == 0.00036
