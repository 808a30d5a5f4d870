"""What a built-in agent carries from step to step, and the small vocabulary its rules share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from adapters.agents.profiles import Capabilities
from domain.agent.actions import Action, Click
from domain.agent.agent_ports import Decision
from domain.agent.observation import Element, Observation
from domain.agent.ports import StepRecord

ADD_TO_CART = r"\badd (?:to (?:cart|bag|basket)|one pair|\w+ pairs?)"
CHECKOUT = r"check ?out"


@dataclass
class Memory:
    budget: int | None = None
    delivery: int | None = None
    product: str | None = None
    """The product the agent chose, by name."""
    price: int | None = None
    """Its price in cents, from the product page's structured data (for agents that read it)."""
    rejected: set[str] = field(default_factory=set)
    """Products found over the shopper's limit."""
    seen_products: list[str] = field(default_factory=list)
    tried_sitemap: bool = False
    not_listings: set[str] = field(default_factory=set)
    """Parent addresses of link groups found to be navigation (their links lead to more of the same)."""


@dataclass
class Situation:
    observation: Observation
    caps: Capabilities
    memory: Memory
    history: list[StepRecord]

    @property
    def document(self) -> str:
        """The source of a page that is not HTML (the sitemap), as its screenshot shows it."""
        return self.observation.document

    @property
    def title(self) -> str:
        return self.observation.title

    def usable(self, *, roles: tuple[str, ...] = (), include_hidden: bool = False) -> list[Element]:
        return [e for e in self.observation.elements if (e.visible or include_hidden) and not e.in_dialog
                and (not roles or e.role in roles)]

    def find(self, pattern: str, *, roles: tuple[str, ...] = ("button", "link"),
             enabled: bool = True) -> list[Element]:
        rx = re.compile(pattern, re.IGNORECASE)
        return [e for e in self.usable(roles=roles) if rx.search(e.name) and (not enabled or not e.disabled)]


def act(action: Action, notes: str) -> Decision:
    return Decision(action=action, notes=notes)


def click(element: Element, notes: str) -> Decision:
    return act(Click(id=element.id), notes)
