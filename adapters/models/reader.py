"""ModelReader: the read task answered by a model from store pages fetched without JavaScript.

Each of the five facts is read from the answer on its own: a fact given in a form that cannot be read (text where a
number belongs, 13900.0 for cents) is no answer to that fact, so it is graded wrong, and the others still count. A
reply cut by our own token limit before it holds an answer is our error, as for the browser agent (BudgetCutError):
the run is cut short, never graded, and the call, which the provider charged, is recorded as its step. A store the
crawl could not reach is our error too (StoreUnreachableError, raised by the crawl before any call): the model is
never asked to answer from pages it did not get, so nothing is charged and the run is cut short with no step.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from adapters.fetcher import MAX_PAGES, StorePage, crawl_store
from adapters.models.charges import charged
from adapters.models.client import HttpxModelClient
from adapters.models.replies import BudgetCutError, finish_reason
from domain.agent.agent_ports import ReadResult, Task
from domain.agent.judge import READ_FACTS
from domain.agent.lineup import Entrant
from domain.agent.ports import BlobStore
from domain.agent.verdicts import ReadAnswer, ReadFact

MAX_CHARS = 24000
SYSTEM = ("You answer a shopper's question from the pages of an online store. Use only what the pages say. "
          "Prices in cents (e.g. $12.50 -> 1250). Answer null where the pages do not say.")


def pages_text(pages: list[StorePage]) -> str:
    parts = [f"URL: {p.url}\nSTRUCTURED DATA: {json.dumps(p.json_ld)[:4000]}\nTEXT:\n{p.text[:3000]}"
             for p in pages]
    return "\n\n".join(parts)[:MAX_CHARS]


class ModelReader:
    def __init__(self, client: HttpxModelClient, model: Entrant, blobs: BlobStore, *,
                 max_pages: int = MAX_PAGES) -> None:
        self._client, self._model, self._blobs, self._max_pages = client, model, blobs, max_pages

    async def answer(self, task: Task) -> ReadAnswer:
        return (await self.read(task)).answer

    async def read(self, task: Task) -> ReadResult:
        # StoreUnreachableError goes up from here, before the model is asked: no pages, no call, no charge.
        crawl = await crawl_store(task.start_url, task.text, max_pages=self._max_pages)
        pages = crawl.pages
        schema = msgspec.json.schema(ReadAnswer)
        payload = {
            "model": self._model.route, "temperature": 0, "max_tokens": self._model.max_tokens,
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": f"QUESTION: {task.text}\n\nPAGES:\n{pages_text(pages)}"}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "read_answer", "schema": schema, "strict": False}},
        }
        if self._model.reasoning != "none":
            payload["reasoning"] = {"effort": self._model.reasoning}
        reply = await self._client.complete(payload)
        exchange = self._blobs.put(json.dumps({"request": payload, "response": reply.body}).encode())
        charge = charged(self._model, payload, reply.body)
        read = read_answer(reply.body)
        if read is None and finish_reason(reply.body) == "length":
            # The limit is ours: the run says nothing about the model, so it is cut short, not graded. The call
            # was charged: its usage goes with the error, and the run records it as its step.
            raise BudgetCutError(
                f"the reply was cut by our limit of {self._model.max_tokens} completion tokens "
                f"({charge.reasoning} spent reasoning) before it held an answer",
                spent=charge.decision(model_ms=reply.ms, exchange=exchange))
        read = read or ReplyAnswer(answer=ReadAnswer(text=UNREADABLE), unreadable=list(READ_FACTS))
        notes = read.answer.text
        if read.unreadable:
            notes = f"{notes} [facts that could not be read: {', '.join(read.unreadable)}]".strip()
        return ReadResult(answer=read.answer, pages=[p.url for p in pages], fetched=crawl.fetched, notes=notes,
                          tokens_in=charge.tokens_in, tokens_out=charge.tokens_out, tokens_reasoning=charge.reasoning,
                          tokens_cached=charge.cached, model_ms=reply.ms, exchange=exchange, cost_usd=charge.cost_usd,
                          estimated=charge.estimated)


UNREADABLE = "the model's answer could not be read"
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_TYPES: dict[str, Any] = {f.name: f.type for f in msgspec.structs.fields(ReadAnswer)}


class ReplyAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """An answer as read from the reply: the facts that could be read, and the names of those that could not."""

    answer: ReadAnswer
    unreadable: list[ReadFact]


def read_answer(body: dict[str, Any]) -> ReplyAnswer | None:
    """Each fact of the reply's JSON object on its own, strictly typed (an int for cents and days, true or false
    for a size); None when the reply holds no JSON object at all."""
    found = _json_object(_content(body))
    if found is None:
        return None
    facts: dict[str, Any] = {}
    unreadable: list[ReadFact] = []
    for fact in READ_FACTS:
        try:
            facts[fact] = msgspec.convert(found.get(fact), type=_TYPES[fact])
        except msgspec.ValidationError:
            unreadable.append(fact)
    text = found.get("text")
    return ReplyAnswer(answer=ReadAnswer(**facts, text=text if isinstance(text, str) else ""),
                          unreadable=unreadable)


def _content(body: dict[str, Any]) -> str:
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return ""
    if isinstance(content, list):  # parts: {"type": "text", "text": ...}
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _json_object(content: str) -> dict[str, Any] | None:
    """The answer's JSON object, fenced or not."""
    found = _JSON_OBJECT.search(content)
    if found is None:
        return None
    try:
        data = json.loads(found.group(0))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None
