"""Finding a product: the listing's run of sibling links, or the sitemap.

Built-in agents read no page text and see no price in a listing: a listing is the largest group of links to
sibling addresses (/products/a, /products/b, ...), at least three; prices are read on the product page. A group
that led to a page of its own kind (a category link to a category page showing the same categories) is
navigation, not a listing, and is not tried again.
"""

from __future__ import annotations

import re
from collections import defaultdict
from urllib.parse import urlsplit

from adapters.agents.context import Situation, act, click
from domain.agent.actions import Goto
from domain.agent.agent_ports import Decision
from domain.agent.observation import Element

_URL = re.compile(r"https?://[^\s<>\"]+")
MIN_LISTING = 3


def _parent(href: str) -> str:
    return urlsplit(href).path.rstrip("/").rsplit("/", 1)[0]


def _candidates(s: Situation) -> list[Element]:
    """The links of the largest group that share a parent address (first in page order on a tie)."""
    here = urlsplit(s.observation.url)
    groups: dict[str, list[Element]] = defaultdict(list)
    for e in s.usable(roles=("link",)):
        there = urlsplit(e.href or "")
        if e.name and there.netloc == here.netloc and there.path != here.path and _parent(e.href or ""):
            groups[_parent(e.href or "")].append(e)
    if _parent(s.observation.url) in groups:  # we are on one of this group's pages: it is navigation
        s.memory.not_listings.add(_parent(s.observation.url))
    runs = [g for parent, g in groups.items()
            if len({x.href for x in g}) >= MIN_LISTING and parent not in s.memory.not_listings]
    return max(runs, key=len) if runs else []


def listing(s: Situation) -> Decision | None:
    if urlsplit(s.observation.url).path.endswith(".xml"):
        return sitemap(s)
    candidates = _candidates(s)
    s.memory.seen_products = s.memory.seen_products or [e.name for e in candidates]
    chosen = next((e for e in candidates if e.name not in s.memory.rejected), None)
    if chosen is not None:
        return click(chosen, f"open the product {chosen.name!r}")
    if s.caps.sitemap and not s.memory.tried_sitemap:
        s.memory.tried_sitemap = True
        return act(Goto(url="/sitemap.xml"), "no product links here: read the sitemap")
    return None


def sitemap(s: Situation) -> Decision | None:
    urls = _URL.findall(s.document)
    names = [name for name in s.memory.seen_products if name not in s.memory.rejected]
    slugs = [re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") for name in names]
    wanted = [u for slug in slugs for u in urls if u.rstrip("/").endswith("/" + slug)]
    fresh = [u for u in urls if "/product" in u and not any(u.rstrip("/").endswith("/" + _slug(r))
                                                            for r in s.memory.rejected)]
    products = wanted or fresh
    return act(Goto(url=products[0]), "open a product address from the sitemap") if products else None


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
