"""Leaving the cart: check it against the brief, tick only the terms of sale, then go to the checkout.

Built-in agents read no page text: a cart is known by its address or title, its lines by their buttons and
fields, and its total only as far as the agent remembers the price and delivery from the structured data."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from adapters.agents.context import CHECKOUT, Situation, act, click
from domain.agent.actions import Check, Goto, Stop, Type
from domain.agent.agent_ports import Decision

_TERMS = re.compile(r"terms( of sale| and conditions)?|conditions of sale", re.IGNORECASE)
_NOT_TERMS = re.compile(r"newsletter|marketing|offers?|\$|plan|protection", re.IGNORECASE)
_CART = re.compile(r"\b(cart|bag|basket)\b", re.IGNORECASE)


def cart(s: Situation) -> Decision | None:
    ways_on = s.find(CHECKOUT, enabled=False)
    if not ways_on:
        in_cart = _CART.search(urlsplit(s.observation.url).path) or _CART.search(s.title)
        if in_cart and not s.find(r"^remove\b", roles=("button",)):
            return act(Goto(url="/"), "the cart is empty: back to the shoes")
        return None
    if s.caps.checks_brief:
        fix = _check_against_brief(s)
        if fix is not None:
            return fix
    enabled = [e for e in ways_on if not e.disabled]
    if enabled:
        return click(enabled[0], "go to the checkout")
    return _open_the_way(s)


def _check_against_brief(s: Situation) -> Decision | None:
    mine = s.memory.product or ""
    removes = s.find(r"^remove\b", roles=("button",))
    others = [e for e in removes if mine and mine.lower() not in e.name.lower()]
    if others:
        return click(others[0], f"the shopper asked for shoes only: {others[0].name}")
    more = next((e for e in s.usable(roles=("spinbutton", "textbox"))
                 if e.value.isascii() and e.value.isdigit() and int(e.value) > 1), None)
    if more is not None:
        update = next(iter(s.find(r"^update\b", roles=("button",))), None)
        if s.history and s.history[-1].action == Type(id=more.id, text="1") and update:
            return click(update, "one pair only")
        return act(Type(id=more.id, text="1"), "the shopper wants exactly one pair")
    # The total as far as the agent knows it: the price and delivery it read in the structured data.
    price, delivery, budget = s.memory.price, s.memory.delivery, s.memory.budget
    total = price + (delivery or 0) if price is not None else None
    if budget is not None and total is not None and total > budget:
        s.memory.rejected.add(mine)
        mine_remove = next(iter(removes), None)
        if mine_remove is not None:
            return click(mine_remove, f"total {total / 100:.2f} is over the limit: remove it")
    return None


def _open_the_way(s: Situation) -> Decision | None:
    if s.caps.terms_of_sale:
        box = next((e for e in s.usable(roles=("checkbox",)) if not e.checked
                    and _TERMS.search(f"{e.label} {e.name}") and not _NOT_TERMS.search(f"{e.label} {e.name}")), None)
        if box is not None:
            return act(Check(id=box.id, on=True), "tick the box that accepts the terms of sale")
    return act(Stop(reason="way_closed", note="the way to the checkout is closed"), "stop")
