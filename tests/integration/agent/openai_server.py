"""A small server speaking the OpenAI chat-completions protocol, for the model client's tests.

The model name picks the behaviour: a valid tool call, a malformed reply, 429 then success, a slow answer (3 s),
a sluggish but valid one (0.7 s), one that never answers (hang), 503 on every call (unavailable), or a read
answer: right, careless (misreader), right but with one fact mistyped (typoreader), or cut by the token limit
mid-answer (cutreader). `reply_to_all`, when a test sets it, is every request's answer whatever the model (for runs
of line-up models through the executor). It records what it was sent, so tests can check the request.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.integration.agent.provider_replies import CASES
from tests.integration.agent.scripted_model import Eyes, Memory, decide, read_request

USAGE = {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230}


def reply(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "test",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
            "usage": USAGE}


def tool_call(arguments: dict[str, Any]) -> dict[str, Any]:
    return reply({"content": None, "tool_calls": [{"id": "call_1", "type": "function",
                                                   "function": {"name": "act", "arguments": json.dumps(arguments)}}]})


THINKING_TOKENS = 1500
READ_ANSWER: dict[str, Any] = {"price_cents": 13900, "eu42_available": True, "eu44_available": False,
                               "delivery_cents": 999, "return_days": 30, "text": "from the pages"}
"""s12's five facts, right."""


def read_reply(answer: dict[str, Any]) -> dict[str, Any]:
    return reply({"content": json.dumps(answer)})


def cut_read_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A read answer cut by the request's own token limit after two facts: no JSON object a reader could read."""
    cut = reply({"content": json.dumps(READ_ANSWER)[:60]})
    cut["choices"][0]["finish_reason"] = "length"
    cut["usage"] = {**USAGE, "completion_tokens": body.get("max_tokens", 0)}
    return cut


class OpenAIServer:
    def __init__(self, lab_loopback: str = "") -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.flaky_calls = 0
        self.arrived: list[tuple[str, float]] = []
        """(route, time.monotonic()) of each request as it arrived."""
        self.in_flight = self.most_in_flight = 0
        self.delay = 0.0
        """Seconds every scripted answer takes (a slow model)."""
        self.eyes = Eyes(lab_loopback)
        self.memories: dict[str, Memory] = {}
        self.reply_to_all: dict[str, Any] | None = None
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])])

    async def complete(self, request: Request) -> JSONResponse:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return await self._complete(request)
        finally:
            self.in_flight -= 1

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.arrived.append((body["model"], time.monotonic()))
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        model = body["model"]
        if self.reply_to_all is not None:
            return JSONResponse(self.reply_to_all)
        case = re.search(r"case-([a-z0-9_]+)$", model)
        if case:
            return JSONResponse(CASES[case.group(1)].body)
        plays = re.search(r"(plays-([a-z]+)|thinks)-\w+$", model)
        if plays:
            return JSONResponse(await self.play(model, plays.group(2) or "competent", body))
        if model.endswith("malformed"):
            return JSONResponse(reply({"content": "I would click the first product, I think."}))
        if model.endswith("flaky"):
            self.flaky_calls += 1
            if self.flaky_calls == 1:
                return JSONResponse({"error": {"message": "rate limited"}}, status_code=429,
                                    headers={"Retry-After": "1"})
        if model.endswith("slow"):
            await asyncio.sleep(3)
        if model.endswith("sluggish"):
            await asyncio.sleep(0.7)
        if model.endswith("unavailable"):
            return JSONResponse({"error": {"message": "upstream unavailable"}}, status_code=503)
        if model.endswith("hang"):
            # Accept the request and never answer; give up once the client has gone (so the server can stop).
            for _ in range(600):
                if await request.is_disconnected():
                    break
                await asyncio.sleep(0.05)
            return JSONResponse({"error": {"message": "gave up"}}, status_code=504)
        if model.endswith("typoreader"):  # every fact right, the days written as text
            return JSONResponse(read_reply({**READ_ANSWER, "return_days": "30"}))
        if model.endswith("cutreader"):
            return JSONResponse(cut_read_reply(body))
        if model.endswith("misreader"):  # a careless reader: the first price it met, a guess at the rest
            answer = {"price_cents": 14500, "eu42_available": True, "eu44_available": True,
                      "delivery_cents": 0, "return_days": 14, "text": "from the pages"}
            return JSONResponse(reply({"content": json.dumps(answer)}))
        if model.endswith("reader"):
            return JSONResponse(read_reply(READ_ANSWER))
        first = _first_link(body)
        return JSONResponse(tool_call({"notes": "open the first product", "action": {"type": "click", "id": first}}))


    async def play(self, model: str, style: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.delay:
            await asyncio.sleep(self.delay)
        thinks = model.split("-")[-2] == "thinks"
        if thinks and int(body.get("max_tokens", 0)) < THINKING_TOKENS + 200:
            # A reasoning model spends the whole allowance thinking and is cut before it answers.
            cut = reply({"content": ""})
            cut["choices"][0]["finish_reason"] = "length"
            cut["usage"] = {**USAGE, "completion_tokens": body["max_tokens"],
                            "completion_tokens_details": {"reasoning_tokens": body["max_tokens"]}}
            return cut
        memory = self.memories.setdefault(model, Memory())
        answer = tool_call(await decide(style, read_request(body), self.eyes, memory))
        if thinks:
            answer["usage"] = {**USAGE, "completion_tokens": THINKING_TOKENS + 30,
                               "completion_tokens_details": {"reasoning_tokens": THINKING_TOKENS}}
        return answer


def _first_link(body: dict[str, Any]) -> str:
    if len(body["messages"]) < 2:
        return "e0"
    text = next(part["text"] for part in body["messages"][1]["content"] if part["type"] == "text")
    for line in text.splitlines():
        if " link " in line and "$" not in line:
            return line.split(" ", 1)[0]
    return "e0"
