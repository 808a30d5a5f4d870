"""Every recorded provider reply (provider_replies.py, each with its documented source) sent by a real local HTTP
server through the real client and agent: the action it becomes, or the step it costs, recorded as it came."""

from __future__ import annotations

import json
from collections.abc import Iterator

import msgspec
import pytest

from adapters.models.agent import ModelAgent
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY, cost_usd
from adapters.models.replies import BudgetCutError
from domain.agent.actions import decode_action
from domain.agent.agent_ports import Task
from domain.agent.observation import Element, Observation
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer
from tests.integration.agent.provider_replies import CASES
from tests.unit.agent.agent_fakes import MemoryBlobs

pytestmark = pytest.mark.anyio
LUNA = WEEKLY[0]
PAGE = Observation(url="http://s01.lab.localhost/", title="All shoes",
                   elements=[Element(id="e7", role="link", name="Fjord Trail Pro"),
                             Element(id="e8", role="link", name="Aero Run 2")])
TASK = Task(kind="shop", text="Buy shoes.", start_url="http://s01.lab.localhost/")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with ThreadedApp(OpenAIServer().app) as running:
        yield f"{running.url}/v1"


@pytest.mark.parametrize("name", sorted(CASES))
async def test_a_provider_reply_becomes_an_action_or_costs_the_step_and_is_recorded_as_it_came(
        server: str, name: str) -> None:
    case = CASES[name]
    assert case.source.startswith("https://")
    model = msgspec.structs.replace(LUNA, route=f"{LUNA.route}-case-{name}")
    blobs = MemoryBlobs()
    agent = ModelAgent(HttpxModelClient(server, "sk-test", timeout=5, attempts=1), model, blobs)
    if case.budget_cut:
        with pytest.raises(BudgetCutError, match=f"limit of {model.max_tokens} completion tokens") as cut:
            await agent.decide(PAGE, TASK, [])
        spent = cut.value.spent  # charged all the same: the episode records it as the step
        assert spent is not None and spent.action is None and spent.exchange in blobs.data
        assert (spent.tokens_in, spent.tokens_out, spent.tokens_reasoning) == (1200, 400, 400)
        assert spent.cost_usd == cost_usd(LUNA, 1200, 400) and spent.model_ms >= 0
    else:
        decision = await agent.decide(PAGE, TASK, [])
        if case.action is not None:
            assert decision.action == decode_action(json.dumps(case.action)) and not decision.error
        else:
            assert decision.action is None and case.error in decision.error, decision.error
        for field, value in case.usage.items():
            assert getattr(decision, field) == value, field
        if "cost_usd" not in case.usage:
            assert decision.cost_usd == cost_usd(LUNA, decision.tokens_in, decision.tokens_out,
                                                 cached=decision.tokens_cached)
    recorded = json.loads(next(iter(blobs.data.values())))
    assert recorded["response"] == case.body  # the reply as it came, whatever we made of it


async def test_further_tool_calls_are_noted_not_carried_out(server: str) -> None:
    model = msgspec.structs.replace(LUNA, route=f"{LUNA.route}-case-several_tool_calls")
    agent = ModelAgent(HttpxModelClient(server, "sk-test", timeout=5, attempts=1), model, MemoryBlobs())
    decision = await agent.decide(PAGE, TASK, [])
    assert decision.notes.endswith("[1 further tool call(s) in the reply not carried out]")
