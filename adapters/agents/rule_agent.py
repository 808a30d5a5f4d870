"""RuleAgent: a built-in agent without a model. Its rules run in the order a shopper meets the store."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from adapters.agents.context import Memory, Situation, act
from adapters.agents.page_facts import budget_cents
from adapters.agents.profiles import PROFILES, THINK_SECONDS, Capabilities
from adapters.agents.rules_cart import cart
from adapters.agents.rules_entry import dialog, empty_page, walls
from adapters.agents.rules_listing import listing
from adapters.agents.rules_product import product
from domain.agent.actions import Stop
from domain.agent.agent_ports import Decision, Task
from domain.agent.observation import Observation
from domain.agent.ports import StepRecord

Rule = Callable[[Situation], Decision | None]
RULES: tuple[Rule, ...] = (dialog, empty_page, walls, cart, product, listing)
VERSION = "1.0"


class UnknownAgentError(KeyError):
    pass


class RuleAgent:
    def __init__(self, name: str, caps: Capabilities, *, think_seconds: float = THINK_SECONDS) -> None:
        self.name, self.version, self.caps = name, f"builtin/{VERSION}", caps
        self._think = think_seconds
        self._memory = Memory()

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision:
        began = time.monotonic()
        if self._think:
            await asyncio.sleep(self._think)
        self._memory.budget = budget_cents(task.text)
        decision = self._choose(Situation(observation, self.caps, self._memory, history))
        ms = int((time.monotonic() - began) * 1000)
        return Decision(action=decision.action, notes=decision.notes, error=decision.error, model_ms=ms)

    def _choose(self, situation: Situation) -> Decision:
        for rule in RULES:
            decision = rule(situation)
            if decision is not None:
                return decision
        return act(Stop(reason="no_way_on", note="nothing on this page leads on"), "stop")


def builtin_agent(name: str, *, think_seconds: float = THINK_SECONDS) -> RuleAgent:
    """A fresh agent for one run (its memory lasts a run)."""
    try:
        return RuleAgent(name, PROFILES[name], think_seconds=think_seconds)
    except KeyError:
        raise UnknownAgentError(f"no built-in agent {name!r} (known: {', '.join(PROFILES)})") from None
