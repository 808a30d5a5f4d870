"""On a product page: a size (by its label, its image's attributes, the structured data, or the real field),
no pre-ticked extras, then the button that adds exactly what the shopper asked for."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from adapters.agents.context import ADD_TO_CART, Situation, act, click
from adapters.agents.page_facts import Variant, delivery_cents, json_ld, price_cents, size_of, variants
from domain.agent.actions import Check, Goto, Select, Stop
from domain.agent.agent_ports import Decision
from domain.agent.observation import Element

_PAID_EXTRA = re.compile(r"\$|\+|plan|protection|insurance|warranty|kit", re.IGNORECASE)
_MORE_THAN_ONE = re.compile(r"\b(2|two|second|both)\b", re.IGNORECASE)


def product(s: Situation) -> Decision | None:
    adds = s.find(ADD_TO_CART, roles=("button",), enabled=False)
    if not adds:
        return None
    _remember(s)
    if s.caps.checks_brief and _over_budget(s):
        s.memory.rejected.add(s.memory.product or "")
        return act(Goto(url="/"), "over the shopper's limit with delivery: back to choose a cheaper product")
    enabled = [e for e in adds if not e.disabled]
    if not enabled:
        return choose_size(s)
    extra = _preticked_extra(s) if s.caps.untick_extras else None
    if extra is not None:
        return act(Check(id=extra.id, on=False), f"untick the paid extra {extra.label or extra.name!r}")
    if s.caps.checks_brief:
        enabled = [e for e in enabled if not _MORE_THAN_ONE.search(e.name)] or enabled
    return click(enabled[0], "add to the cart")


def _remember(s: Situation) -> None:
    names = [n.get("name") for n in json_ld(s.observation) if n.get("@type") in ("ProductGroup", "Product")]
    title = re.split(r"\s+[–|-]\s+", s.observation.title)[0].strip()
    s.memory.product = str(names[0]) if names and s.caps.structured else title
    s.memory.delivery = delivery_cents(s.observation) or s.memory.delivery
    s.memory.price = price_cents(s.observation) if s.caps.structured else None


def _over_budget(s: Situation) -> bool:
    """Over the limit by what the structured data says (price and delivery); unknown counts as within."""
    budget, price = s.memory.budget, s.memory.price
    return budget is not None and price is not None and price + (s.memory.delivery or 0) > budget


def _preticked_extra(s: Situation) -> Element | None:
    boxes = s.usable(roles=("checkbox", "switch"))
    return next((e for e in boxes if e.checked and _PAID_EXTRA.search(f"{e.name} {e.label}")), None)


def choose_size(s: Situation) -> Decision | None:
    for way in (_labelled_size, _image_size, _real_field, _reveal_sizes):
        decision = way(s)
        if decision is not None:
            return decision
    return act(Stop(reason="no_size", note="no size can be chosen on this page"), "stop")


def _in_stock(s: Situation) -> list[Variant] | None:
    """Variants of the colour on show, when the agent reads structured data and the page has it."""
    if not s.caps.structured:
        return None
    found = variants(s.observation)
    if not found:
        return None
    current = next((e.name for e in s.usable(roles=("link",)) if e.selected), found[0].colour)
    return [v for v in found if v.colour == current] or found


def _labelled_size(s: Situation) -> Decision | None:
    buttons = [e for e in s.usable(roles=("button",)) if size_of(e.name) and not e.disabled]
    stock = _in_stock(s)
    if stock is not None:
        good = {v.size for v in stock if v.in_stock}
        buttons = [e for e in buttons if size_of(e.name) in good]
    return click(buttons[0], f"choose size {buttons[0].name}") if buttons else None


def _image_size(s: Situation) -> Decision | None:
    if not s.caps.structured:
        return None
    images = [e for e in s.usable(roles=("button",)) if not e.name and "src" in e.hints]
    for e in images:  # alt, title or data attributes may say the size
        said = size_of(" ".join(v for k, v in e.hints.items() if k != "src"))
        if said and not e.disabled:
            return click(e, f"choose size {said} (from the image's attributes)")
    stock = _in_stock(s)
    if not images or not stock or len(stock) != len(images):
        return None
    # The structured data lists the sizes in the order the page shows them.
    pick = next(((e, v) for e, v in zip(images, stock, strict=True) if v.in_stock and not e.disabled), None)
    return click(pick[0], f"choose size {pick[1].size} (from the structured data)") if pick else None


def _real_field(s: Situation) -> Decision | None:
    hidden = s.caps.hidden_fields
    for field in s.usable(roles=("combobox", "listbox"), include_hidden=hidden):
        sizes = [o for o in field.options if size_of(o) and "disabled" not in o]
        stock = _in_stock(s)
        if stock is not None:
            good = {v.size for v in stock if v.in_stock}
            sizes = [o for o in sizes if size_of(o) in good] or sizes
        if sizes:
            return act(Select(id=field.id, option=sizes[0]), f"choose size {sizes[0]} in the size field")
    return None


def _reveal_sizes(s: Situation) -> Decision | None:
    if not s.caps.reveal_options:
        return None
    here = urlsplit(s.observation.url)
    options = [e for e in s.usable(roles=("link",)) if e.href and urlsplit(e.href).path == here.path
               and urlsplit(e.href).query and e.href != s.observation.url]
    return click(options[0], f"pick the colour {options[0].name} to reveal the sizes") if options else None
