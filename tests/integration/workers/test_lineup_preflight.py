"""Before Monday's line-up the scheduler asks each line-up model for one step through the gateway (a real local
server speaking the protocol), records the result as an event, and does not schedule a model the gateway cannot
reach that morning: it is shown as unavailable, not as a failure at every station. At the Monday-afternoon repeat
(14:00 UTC) such a model is asked again; if it answers, its line-up runs are scheduled then, for the same week;
if not, it gets no place that week. A reply that arrives is the model's answer, usable or not: the model is
scheduled and answers for it at the stations."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import msgspec
import pytest

from adapters.models.check import as_result, check_lineup, gateway_check
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY
from adapters.settings import Settings
from adapters.wiring import Runtime
from domain.agent.lineup import Entrant, ModelCheckResult
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer
from tests.integration.workers.clocked import MONDAY_MORNING, Clock
from workers.ledger import RunLedger
from workers.plan import course_cells
from workers.schedule import CatchUp, Preflight, catch_up

WEEK = "2026-W49"
MONDAY_0600 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
MONDAY_1355 = datetime(2026, 11, 30, 13, 55, tzinfo=UTC)
MONDAY_1400 = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
MONDAY_1405 = datetime(2026, 11, 30, 14, 5, tzinfo=UTC)
MONDAY_1500 = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)
WEDNESDAY = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
LUNA = WEEKLY[0]
HAIKU = msgspec.structs.replace(WEEKLY[1], route=f"{WEEKLY[1].route}-unavailable")  # the gateway answers 503
BABBLER = msgspec.structs.replace(WEEKLY[1], route=f"{WEEKLY[1].route}-malformed")  # answers in prose, no action


@pytest.fixture
def gateway() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


def through(base: str, entrants: Sequence[Entrant], asked: list[list[str]] | None = None) -> Preflight:
    """The scheduler's check of these entrants through the real client, against the server at `base`."""
    named = {e.model: e for e in entrants}

    def preflight(models: Sequence[str]) -> list[ModelCheckResult]:
        if asked is not None:
            asked.append(list(models))

        async def run() -> list[ModelCheckResult]:
            client = HttpxModelClient(base, "sk-test", timeout=5, attempts=2, backoff=0.05)
            try:
                return [as_result(c) for c in await check_lineup(client, [named[m] for m in models if m in named])]
            finally:
                await client.aclose()

        return asyncio.run(run())

    return preflight


def scripted(answers: dict[datetime, dict[str, bool]], clock: Clock, asked: list[list[str]]) -> Preflight:
    """A gateway whose reachability per model the test sets for each moment (True: the model answers)."""

    def preflight(models: Sequence[str]) -> list[ModelCheckResult]:
        asked.append(list(models))
        up = answers[clock.now]
        return [ModelCheckResult(model=m, available=up[m], problem="" if up[m] else "connection refused")
                for m in models]

    return preflight


def tick(runtime: Runtime, ledger: RunLedger, clock: Clock, at: datetime, models: Sequence[str],
         preflight: Preflight | None) -> CatchUp:
    clock.now = at
    return catch_up(runtime, ledger, at, models=models, publish=None, preflight=preflight)


def scheduled_at(runtime: Runtime) -> dict[str, set[datetime]]:
    """When each model's runs were scheduled (the Run.Scheduled events' times)."""
    times: dict[str, set[datetime]] = {}
    for event in runtime.record.read_log(limit=100_000):
        if event.name == "Run.Scheduled":
            times.setdefault(event.payload.model, set()).add(event.at)
    return times


def checks_recorded(runtime: Runtime) -> list[tuple[int, list[tuple[str, bool]]]]:
    return [(e.payload.attempt, [(r.model, r.available) for r in e.payload.results])
            for e in runtime.record.read_log(limit=100_000) if e.name == "LineUp.ModelsChecked"]


def dead_gateway() -> str:
    """A loopback address nothing listens on: every call is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


# --- the rules, with a gateway the test scripts ---------------------------------------------------------------------


def test_a_model_unreachable_at_six_is_asked_again_at_two_and_scheduled_then_for_the_same_week(
        runtime: Runtime, clock: Clock) -> None:
    asked: list[list[str]] = []
    models = ["luna", "haiku"]
    preflight = scripted({MONDAY_0600: {"luna": True, "haiku": False}, MONDAY_1400: {"haiku": True}}, clock, asked)
    ledger = RunLedger(runtime.record)

    morning = tick(runtime, ledger, clock, MONDAY_0600, models, preflight)
    assert morning.unavailable == ["haiku"] and len(morning.lineup) == len(course_cells(["luna"]))
    assert runtime.record.lineup().unavailable(WEEK) == ["haiku"]
    assert tick(runtime, ledger, clock, MONDAY_1355, models, preflight).unavailable == ["haiku"]
    assert asked == [["luna", "haiku"]]  # nobody is asked again before 14:00

    afternoon = tick(runtime, ledger, clock, MONDAY_1400, models, preflight)
    assert asked == [["luna", "haiku"], ["haiku"]]  # only the model the morning could not reach
    assert afternoon.unavailable == [] and runtime.record.lineup().unavailable(WEEK) == []
    assert len(afternoon.lineup) == len(course_cells(models))
    assert scheduled_at(runtime) == {"luna": {MONDAY_0600}, "haiku": {MONDAY_1400}}
    ledger.refresh()
    assert {r.week for r in ledger.runs.values()} == {WEEK}

    # Later ticks, a restart and the rest of the week ask nobody and schedule nothing twice.
    events = len(runtime.record.read_log(limit=100_000))
    for at in (MONDAY_1405, WEDNESDAY):
        assert tick(runtime, ledger, clock, at, models, preflight).unavailable == []
    assert tick(runtime, RunLedger(runtime.record), clock, WEDNESDAY, models, preflight).unavailable == []
    assert len(asked) == 2 and len(runtime.record.read_log(limit=100_000)) == events
    assert checks_recorded(runtime) == [(1, [("luna", True), ("haiku", False)]), (2, [("haiku", True)])]


def test_a_model_unreachable_at_both_checks_gets_no_place_that_week(runtime: Runtime, clock: Clock) -> None:
    asked: list[list[str]] = []
    models = ["luna", "haiku"]
    preflight = scripted({MONDAY_0600: {"luna": True, "haiku": False}, MONDAY_1400: {"haiku": False}}, clock, asked)
    ledger = RunLedger(runtime.record)
    tick(runtime, ledger, clock, MONDAY_0600, models, preflight)
    afternoon = tick(runtime, ledger, clock, MONDAY_1400, models, preflight)
    assert afternoon.unavailable == ["haiku"] and runtime.record.lineup().unavailable(WEEK) == ["haiku"]
    assert tick(runtime, ledger, clock, WEDNESDAY, models, preflight).unavailable == ["haiku"]
    assert asked == [["luna", "haiku"], ["haiku"]]
    assert set(scheduled_at(runtime)) == {"luna"}


def test_after_downtime_that_missed_the_morning_the_second_check_is_the_next_ticks(
        runtime: Runtime, clock: Clock) -> None:
    """The first tick of the week comes at 15:00: the first check is made then, and the models it could not
    reach are asked again at the next tick, not twice in the same minute."""
    asked: list[list[str]] = []
    models = ["luna", "haiku"]
    next_tick = datetime(2026, 11, 30, 15, 5, tzinfo=UTC)
    preflight = scripted({MONDAY_1500: {"luna": True, "haiku": False}, next_tick: {"haiku": True}}, clock, asked)
    ledger = RunLedger(runtime.record)
    assert tick(runtime, ledger, clock, MONDAY_1500, models, preflight).unavailable == ["haiku"]
    assert asked == [["luna", "haiku"]]
    assert tick(runtime, ledger, clock, next_tick, models, preflight).unavailable == []
    assert asked == [["luna", "haiku"], ["haiku"]]
    assert scheduled_at(runtime) == {"luna": {MONDAY_1500}, "haiku": {next_tick}}


# --- through a real local server speaking the chat-completions protocol ----------------------------------------------


def test_a_model_the_gateway_cannot_serve_is_not_scheduled_and_the_check_is_recorded_once(
        runtime: Runtime, gateway: tuple[OpenAIServer, str]) -> None:
    fake, base = gateway
    asked: list[list[str]] = []
    preflight = through(base, [LUNA, HAIKU], asked)
    models = [LUNA.model, HAIKU.model, "baseline-robust"]
    ledger = RunLedger(runtime.record)
    done = catch_up(runtime, ledger, MONDAY_MORNING, models=models, publish=None, preflight=preflight)
    assert done.unavailable == [HAIKU.model]
    assert len(done.lineup) == len(course_cells([LUNA.model, "baseline-robust"]))
    ledger.refresh()
    assert {r.model for r in ledger.runs.values()} == {LUNA.model, "baseline-robust"}

    events = [e for e in runtime.record.read_log(limit=10_000) if e.name == "LineUp.ModelsChecked"]
    assert len(events) == 1
    checked = runtime.record.lineup().checks[WEEK]
    assert [(c.model, c.available) for c in checked] == [(LUNA.model, True), (HAIKU.model, False)]
    assert "HTTP 503" in checked[1].problem and checked[0].resolved == "test"

    # A later tick the same morning asks nobody again and still leaves the model out.
    calls = len(fake.requests)
    again = catch_up(runtime, ledger, MONDAY_MORNING, models=models, publish=None, preflight=preflight)
    assert again.unavailable == [HAIKU.model] and len(asked) == 1 and len(fake.requests) == calls


def test_a_model_that_answers_in_plain_text_is_available_and_scheduled(
        runtime: Runtime, gateway: tuple[OpenAIServer, str]) -> None:
    """A 200 with prose and no action is the model's answer: it runs the course and fails (or not) there."""
    fake, base = gateway
    models = [LUNA.model, BABBLER.model]
    done = catch_up(runtime, RunLedger(runtime.record), MONDAY_MORNING, models=models, publish=None,
                    preflight=through(base, [LUNA, BABBLER]))
    assert done.unavailable == [] and len(done.lineup) == len(course_cells(models))
    assert set(scheduled_at(runtime)) == set(models)
    babbler = runtime.record.lineup().checks[WEEK][1]
    assert babbler.available and not babbler.passed and babbler.problem.startswith("unusable reply")
    assert any(r["model"] == BABBLER.route for r in fake.requests)


def test_a_gateway_refusing_at_six_and_answering_at_two_gets_the_line_up_scheduled_at_two(
        settings: Settings, runtime: Runtime, clock: Clock, gateway: tuple[OpenAIServer, str]) -> None:
    """The scheduler's own check (gateway_check): every call refused at 06:00, every model answers at 14:00."""
    fake, base = gateway
    models = [LUNA.model, WEEKLY[1].model]
    down = msgspec.structs.replace(settings, model_api_key="sk-test", model_base_url=dead_gateway())
    up = msgspec.structs.replace(down, model_base_url=base)
    ledger = RunLedger(runtime.record)

    morning = tick(runtime, ledger, clock, MONDAY_0600, models, gateway_check(down, timeout=5, backoff=0.05))
    assert morning.unavailable == models and morning.lineup == [] and scheduled_at(runtime) == {}
    afternoon = tick(runtime, ledger, clock, MONDAY_1400, models, gateway_check(up, timeout=5, backoff=0.05))
    assert afternoon.unavailable == [] and len(afternoon.lineup) == len(course_cells(models))
    assert scheduled_at(runtime) == {m: {MONDAY_1400} for m in models}
    assert sorted(r["model"] for r in fake.requests) == sorted(e.route for e in WEEKLY[:2])
    assert checks_recorded(runtime) == [(1, [(m, False) for m in models]), (2, [(m, True) for m in models])]


def test_a_gateway_refusing_at_six_and_at_two_leaves_the_models_out_of_the_week(
        settings: Settings, runtime: Runtime, clock: Clock, gateway: tuple[OpenAIServer, str]) -> None:
    fake, base = gateway
    models = [LUNA.model, WEEKLY[1].model]
    down = msgspec.structs.replace(settings, model_api_key="sk-test", model_base_url=dead_gateway())
    ledger = RunLedger(runtime.record)
    tick(runtime, ledger, clock, MONDAY_0600, models, gateway_check(down, timeout=5, backoff=0.05))
    afternoon = tick(runtime, ledger, clock, MONDAY_1400, models, gateway_check(down, timeout=5, backoff=0.05))
    assert afternoon.unavailable == models and runtime.record.lineup().unavailable(WEEK) == models
    assert "ConnectError" in runtime.record.lineup().second_checks[WEEK][0].problem
    # The gateway is back on Wednesday: the week's checks are made, so nobody is asked and nothing is scheduled.
    up = msgspec.structs.replace(down, model_base_url=base)
    assert tick(runtime, ledger, clock, WEDNESDAY, models, gateway_check(up)).unavailable == models
    assert fake.requests == [] and scheduled_at(runtime) == {}
