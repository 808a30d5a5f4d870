"""ModelReader: the read task answered by a model from store pages fetched without JavaScript."""

from __future__ import annotations

import json

import msgspec

from adapters.fetcher import MAX_PAGES, StorePage, crawl_store
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import cost_usd
from domain.agent.agent_ports import ReadResult, Task
from domain.agent.lineup import Entrant
from domain.agent.ports import BlobStore
from domain.agent.verdicts import ReadAnswer

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
        usage = reply.body.get("usage") or {}
        tokens_in, tokens_out = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        return ReadResult(answer=_decode(reply.body), pages=[p.url for p in pages], fetched=crawl.fetched,
                          notes=f"[exchange {exchange}]",
                          tokens_in=tokens_in, tokens_out=tokens_out, model_ms=reply.ms,
                          cost_usd=cost_usd(self._model, tokens_in, tokens_out))


def _decode(body: dict[str, object]) -> ReadAnswer:
    """A malformed answer is an empty answer: it is graded, and gets no facts right."""
    try:
        content = body["choices"][0]["message"]["content"]  # type: ignore[index]
        return msgspec.json.decode(str(content).strip().removeprefix("```json").strip("`"), type=ReadAnswer)
    except (KeyError, IndexError, TypeError, msgspec.DecodeError, msgspec.ValidationError):
        return ReadAnswer(text="the model's answer could not be read")
