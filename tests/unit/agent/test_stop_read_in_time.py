"""A stop is judged by the page like any step, and by the run's time rule: an order form the judge reads after the
run's seconds are up is a time limit, not a pass; a stop read late without a checkout stays the agent's stop."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec
import pytest

from domain.agent.actions import Stop
from domain.agent.agent_ports import Decision, Task
from domain.agent.episode import Episode
from domain.agent.observation import Observation, PageProbe
from domain.agent.verdicts import OrderLine, OrderSummary, Verdict
from tests.unit.agent.agent_fakes import ListRecorder, MemoryBlobs, ScriptedAgent, ScriptedSession

pytestmark = pytest.mark.anyio
URL = "http://s11.lab.localhost:8700"
TASK = Task(kind="shop", text="Pick an in-stock product ...", start_url=f"{URL}/")
ORDER = OrderSummary(items=[OrderLine(kind="shoes", product="aero-run-2", name="Aero Run 2", unit_price_cents=13900)],
                     delivery_cents=999, total_cents=14899)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Clock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class SlowProbe(ScriptedSession):
    """The judge's read takes `read_seconds` on the run's clock."""

    clock: Clock = field(default_factory=Clock)
    read_seconds: float = 0.0

    async def probe(self) -> PageProbe:
        self.clock.now += self.read_seconds
        return await super().probe()


async def _stop_at(open_form: bool, read_seconds: float) -> Verdict:
    observation = Observation(url=f"{URL}/checkout", screenshot=b"\xff\xd8jpeg")
    probe = PageProbe(url=observation.url, checkout_open=open_form,
                      order_json=msgspec.json.encode(ORDER).decode() if open_form else None)
    clock = Clock()
    session = SlowProbe([(observation, probe)], clock=clock, read_seconds=read_seconds)
    result = await Episode(session=session, agent=ScriptedAgent([Decision(action=Stop(reason="done"))]), task=TASK,
                           recorder=ListRecorder(), blobs=MemoryBlobs(), clock=clock, max_seconds=10).run()
    assert isinstance(result, Verdict)
    return result


async def test_a_stop_at_an_open_order_form_read_in_time_passes() -> None:
    result = await _stop_at(True, 1.0)
    assert (result.passed, result.outcome, result.stage, result.step) == (True, "passed", "checkout", 1)


async def test_a_stop_at_an_open_order_form_read_after_the_limit_is_a_time_limit() -> None:
    result = await _stop_at(True, 11.0)
    assert (result.passed, result.outcome, result.order) == (False, "time_limit", None)
    assert result.reason == "no checkout within 10 seconds: the order form opened at 11.0 s, after the limit"


async def test_a_stop_without_a_checkout_stays_stopped_read_early_or_late() -> None:
    for seconds in (1.0, 11.0):
        result = await _stop_at(False, seconds)
        assert (result.passed, result.outcome, result.reason) == (False, "stopped", "the agent stopped: done")
