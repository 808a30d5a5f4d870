"""Finding a product: links with a price in the listing, blocks that act as links, or the sitemap."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from adapters.agents.context import Situation, act, click
from adapters.agents.page_facts import cents
from domain.actions import Goto
from domain.agent_ports import Decision
from domain.observation import Element

_URL = re.compile(r"https?://[^\s<>\"]+")


def price_after(text: str, name: str) -> int | None:
    at = text.find(name)
    return cents(text[at + len(name): at + len(name) + 80]) if at >= 0 and name else None


def _candidates(s: Situation) -> list[Element]:
    links = [e for e in s.usable(roles=("link",)) if e.name and price_after(s.text, e.name) is not None]
    if links or not s.caps.sitemap:
        return links
    # Blocks made clickable by script, whose text shows a price: product tiles without links.
    return [e for e in s.usable(roles=("generic",)) if cents(e.name) is not None]


def _affordable(s: Situation, element: Element) -> bool:
    budget = s.memory.budget if s.caps.checks_brief else None
    if budget is None:
        return True
    price = price_after(s.text, element.name) or cents(element.name) or 0
    return price + (s.memory.delivery or 0) <= budget


def listing(s: Situation) -> Decision | None:
    if urlsplit(s.observation.url).path.endswith(".xml"):
        return sitemap(s)
    candidates = _candidates(s)
    s.memory.seen_products = s.memory.seen_products or [_title(e) for e in candidates]
    fresh = [e for e in candidates if _title(e) not in s.memory.rejected]
    chosen = next((e for e in fresh if _affordable(s, e)), None)
    if chosen is not None:
        return click(chosen, f"open the product {_title(chosen)!r}")
    if s.caps.sitemap and not s.memory.tried_sitemap:
        s.memory.tried_sitemap = True
        return act(Goto(url="/sitemap.xml"), "no product links here: read the sitemap")
    return None


def sitemap(s: Situation) -> Decision | None:
    urls = _URL.findall(s.text)
    names = [name for name in s.memory.seen_products if name not in s.memory.rejected]
    slugs = [re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") for name in names]
    wanted = [u for slug in slugs for u in urls if u.rstrip("/").endswith("/" + slug)]
    products = wanted or [u for u in urls if "/product" in u]
    return act(Goto(url=products[0]), "open a product address from the sitemap") if products else None


def _title(element: Element) -> str:
    # A tile's name runs on into its price and details; the product name comes first.
    return re.split(r"\s*\$", element.name, maxsplit=1)[0].strip()
