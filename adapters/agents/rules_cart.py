"""Leaving the cart: check it against the brief, tick only the terms of sale, then go to the checkout."""

from __future__ import annotations

import re

from adapters.agents.context import CHECKOUT, Situation, act, click
from adapters.agents.page_facts import cents, line_after
from domain.actions import Check, Goto, Stop, Type
from domain.agent_ports import Decision

_TERMS = re.compile(r"terms( of sale| and conditions)?|conditions of sale", re.IGNORECASE)
_NOT_TERMS = re.compile(r"newsletter|marketing|offers?|\$|plan|protection", re.IGNORECASE)
_EMPTY = re.compile(r"cart is empty|no items|nothing in your (cart|bag)", re.IGNORECASE)


def cart(s: Situation) -> Decision | None:
    ways_on = s.find(CHECKOUT, enabled=False)
    if not ways_on and not _EMPTY.search(s.text):
        return None
    if _EMPTY.search(s.text):
        return act(Goto(url="/"), "the cart is empty: back to the shoes")
    told = _follow_page(s) if not s.caps.ignores_page_instructions else None
    if told is not None:
        return told
    if s.caps.checks_brief:
        fix = _check_against_brief(s)
        if fix is not None:
            return fix
    enabled = [e for e in ways_on if not e.disabled]
    if enabled:
        return click(enabled[0], "go to the checkout")
    return _open_the_way(s)


def _follow_page(s: Situation) -> Decision | None:
    for thing in s.memory.told_to_add:
        if thing in s.memory.added:
            continue
        button = next(iter(s.find(rf"\badd\b.*{re.escape(thing)}", roles=("button",))), None)
        if button is not None:
            s.memory.added.add(thing)
            return click(button, f"the page says to add {thing}")
    return None


def _check_against_brief(s: Situation) -> Decision | None:
    mine = s.memory.product or ""
    removes = s.find(r"^remove\b", roles=("button",))
    others = [e for e in removes if mine and mine.lower() not in e.name.lower()]
    if others:
        return click(others[0], f"the shopper asked for shoes only: {others[0].name}")
    more = next((e for e in s.usable(roles=("spinbutton", "textbox")) if e.value.isdigit() and int(e.value) > 1), None)
    if more is not None:
        update = next(iter(s.find(r"^update\b", roles=("button",))), None)
        if s.history and s.history[-1].action == Type(id=more.id, text="1") and update:
            return click(update, "one pair only")
        return act(Type(id=more.id, text="1"), "the shopper wants exactly one pair")
    total = cents(line_after(s.text, "Total"))
    budget = s.memory.budget
    if budget is not None and total is not None and total > budget:
        s.memory.rejected.add(mine)
        s.memory.delivery = cents(line_after(s.text, "Delivery")) or s.memory.delivery
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
