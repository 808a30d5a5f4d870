"""What a built-in agent can read from any page: prices in names, the shopper's limit, product data in the code.

Nothing here knows a station: these are readings a careful person (or model) could make of any store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from domain.agent.observation import Element, Observation

_MONEY = re.compile(r"\$\s?(\d{1,5}(?:,\d{3})*(?:\.\d{2})?)")
_LIMIT = re.compile(r"at most \$\s?(\d+(?:\.\d{2})?)", re.IGNORECASE)
_SIZE = re.compile(r"\b(?:EU\s?)(\d{2})\b", re.IGNORECASE)


def cents(text: str) -> int | None:
    found = _MONEY.search(text)
    return round(float(found.group(1).replace(",", "")) * 100) if found else None


def budget_cents(task_text: str) -> int | None:
    """The shopper's limit, when the task carries a brief ("... at most $150 in total ...")."""
    found = _LIMIT.search(task_text)
    return round(float(found.group(1)) * 100) if found else None


def size_of(text: str) -> str | None:
    found = _SIZE.search(text)
    return f"EU {found.group(1)}" if found else None


def json_ld_nodes(data: Any) -> Iterator[dict[str, Any]]:
    """Every object inside a JSON-LD value, depth first."""
    if isinstance(data, dict):
        yield data
        for value in data.values():
            yield from json_ld_nodes(value)
    elif isinstance(data, list):
        for value in data:
            yield from json_ld_nodes(value)


def json_ld(observation: Observation) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in observation.structured:
        try:
            out.extend(json_ld_nodes(json.loads(block)))
        except ValueError:
            continue
    return out


@dataclass(frozen=True)
class Variant:
    colour: str
    size: str
    in_stock: bool
    price_cents: int | None


def variants(observation: Observation) -> list[Variant]:
    """Product variants from schema.org data, in the order the page gives them."""
    found = []
    for node in json_ld(observation):
        if node.get("@type") != "Product" or "size" not in node:
            continue
        offers = node.get("offers") or {}
        price = offers.get("price")
        found.append(Variant(colour=str(node.get("color", "")), size=str(node["size"]),
                             in_stock=str(offers.get("availability", "")).endswith("InStock"),
                             price_cents=round(float(price) * 100) if price else None))
    return found


def delivery_cents(observation: Observation) -> int | None:
    """The delivery rate, when the structured data gives it."""
    for node in json_ld(observation):
        rate = node.get("shippingRate")
        if isinstance(rate, dict) and rate.get("value"):
            return round(float(rate["value"]) * 100)
    return None


def price_cents(observation: Observation) -> int | None:
    """The product's price from the structured data (a ProductGroup's lowest offer, or a Product's offer)."""
    for node in json_ld(observation):
        if node.get("@type") in ("ProductGroup", "Product"):
            offers = node.get("offers") or {}
            price = offers.get("lowPrice") or offers.get("price")
            if price:
                return round(float(price) * 100)
    return None


def named(observation: Observation, pattern: str, *, roles: tuple[str, ...] = ()) -> list[Element]:
    """Visible, enabled elements whose name matches the pattern (case-insensitive)."""
    rx = re.compile(pattern, re.IGNORECASE)
    return [e for e in observation.elements
            if e.visible and not e.disabled and rx.search(e.name) and (not roles or e.role in roles)]


def first(observation: Observation, pattern: str, *, roles: tuple[str, ...] = ()) -> Element | None:
    found = named(observation, pattern, roles=roles)
    return found[0] if found else None
