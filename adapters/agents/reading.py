"""The built-in reader: how a built-in agent answers the read question from fetched pages, structured data first,
then, if it reads text, the visible text of the product page and the help pages."""

from __future__ import annotations

import re
from typing import Any

from adapters.agents.page_facts import cents, json_ld_nodes
from adapters.fetcher import MAX_PAGES, StorePage, crawl_store, product_asked
from domain.agent.agent_ports import ReadResult, Task
from domain.agent.verdicts import ReadAnswer

_SIZES = (42, 44)


def from_structured(pages: list[StorePage], product: str) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for page in pages:
        for node in (n for block in page.json_ld for n in json_ld_nodes(block)):
            if node.get("@type") in ("ProductGroup", "Product") and node.get("name") == product:
                offers = node.get("offers") or {}
                price = offers.get("lowPrice") or offers.get("price")
                if price:
                    facts.setdefault("price_cents", round(float(price) * 100))
                for size in _SIZES:
                    stock = [str((v.get("offers") or {}).get("availability", "")).endswith("InStock")
                             for v in node.get("hasVariant", []) if v.get("size") == f"EU {size}"]
                    if stock:
                        facts.setdefault(f"eu{size}_available", any(stock))
            rate = node.get("shippingRate")
            if isinstance(rate, dict) and rate.get("value"):
                facts.setdefault("delivery_cents", round(float(rate["value"]) * 100))
            if node.get("merchantReturnDays"):
                facts.setdefault("return_days", int(node["merchantReturnDays"]))
    return facts


def from_text(pages: list[StorePage], product: str) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for page in pages:
        heading = re.search(rf"(?m)^{re.escape(product)}\n", page.text)
        if heading:  # the product's own page: its name as a heading, then the price
            facts.setdefault("price_cents", cents(page.text[heading.end():heading.end() + 200]))
            for size in _SIZES:
                label = re.search(rf"EU {size}\b(\s*,\s*sold out)?", page.text)
                if label:
                    facts.setdefault(f"eu{size}_available", label.group(1) is None)
        delivery = re.search(r"(?i)delivery(?: costs|:)\s*(\$\s?\d+\.\d{2})", page.text)
        if delivery:
            facts.setdefault("delivery_cents", cents(delivery.group(1)))
        days = re.search(r"(?i)return[^.\n]{0,40}?within (\d+) days", page.text)
        if days:
            facts.setdefault("return_days", int(days.group(1)))
    return facts


def answer_from_pages(pages: list[StorePage], product: str, *, reads_text: bool) -> ReadAnswer:
    facts = from_structured(pages, product)
    if reads_text:
        for key, value in from_text(pages, product).items():
            if value is not None:
                facts.setdefault(key, value)
    said = ", ".join(f"{k}={v}" for k, v in sorted(facts.items())) or "nothing found"
    return ReadAnswer(text=f"{product}: {said}", **facts)


class BuiltinReader:
    """A built-in agent as a reader: structured data only, or structured data and then visible text. A store the
    crawl could not reach raises StoreUnreachableError (our error), as for the model's reader: nothing is graded."""

    def __init__(self, reads_text: bool, *, max_pages: int = MAX_PAGES) -> None:
        self.reads_text, self.max_pages = reads_text, max_pages

    async def answer(self, task: Task) -> ReadAnswer:
        return (await self.read(task)).answer

    async def read(self, task: Task) -> ReadResult:
        crawl = await crawl_store(task.start_url, task.text, max_pages=self.max_pages)
        answer = answer_from_pages(crawl.pages, product_asked(task.text), reads_text=self.reads_text)
        return ReadResult(answer=answer, pages=[p.url for p in crawl.pages], fetched=crawl.fetched, notes=answer.text)
