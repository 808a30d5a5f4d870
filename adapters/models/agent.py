"""ModelAgent: a model behind the gateway deciding each step through the `act` tool (or JSON as a fallback).

A reply that holds no valid action costs the step. The whole exchange goes to the blob store and the step names
it: the request exactly as sent (the screenshot replaced by its sha256, which names the step's screenshot blob),
the tool schema's sha256 and the raw reply. The key is in the client's headers and never reaches it.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import msgspec

from adapters.models.client import CallState, HttpxModelClient
from adapters.models.lineup import cost_usd
from adapters.models.prompt import MAX_TOKENS, TEMPERATURE, act_tool, messages, tool_schema_sha256
from domain.actions import Action, ActionError, decode_action
from domain.agent_ports import Decision, Task
from domain.lineup import Entrant
from domain.observation import Observation
from domain.ports import BlobStore, StepRecord

_FENCE = re.compile(r"\{.*\}", re.DOTALL)
EXCHANGE_FORMAT = "canitbuy-exchange/1"


class ReplyError(ValueError):
    pass


class ModelAgent:
    def __init__(self, client: HttpxModelClient, model: Entrant, blobs: BlobStore) -> None:
        self._client, self._model, self._blobs = client, model, blobs
        self.name, self.version = model.model, model.route
        self._call: CallState | None = None
        """The call in flight (one agent per run, so one at a time); None once it answered."""

    def connection_trouble(self) -> str | None:
        """The newest failure of the model call in flight (ModelLink): the episode asks when its time ran out."""
        call = self._call
        return call.problem if call is not None and call.failures else None

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision:
        payload = {"model": self._model.route, "messages": messages(observation, task, history),
                   "tools": [act_tool()], "tool_choice": "auto", "temperature": TEMPERATURE,
                   "max_tokens": MAX_TOKENS}
        self._call = CallState()
        reply = await self._client.complete(payload, self._call)
        self._call = None
        exchange = self._blobs.put(exchange_json(payload, observation.screenshot, reply.body, reply.attempts))
        usage = reply.body.get("usage") or {}
        tokens_in, tokens_out = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        usage_of = msgspec.structs.replace  # the same usage on a decision with or without an action
        spent = Decision(action=None, tokens_in=tokens_in, tokens_out=tokens_out, model_ms=reply.ms,
                         cost_usd=cost_usd(self._model, tokens_in, tokens_out), exchange=exchange)
        try:
            action, notes = parse_reply(reply.body)
        except ReplyError as error:
            return usage_of(spent, error=str(error))
        return usage_of(spent, action=action, notes=notes)


def exchange_json(payload: dict[str, Any], screenshot: bytes, reply: dict[str, Any], attempts: int) -> bytes:
    """The exchange as recorded. The image (already stored as the step's screenshot) is named, not repeated."""
    named = f"sha256:{hashlib.sha256(screenshot).hexdigest()}" if screenshot else ""
    request = {**payload, "messages": [_without_image(m, named) for m in payload["messages"]]}
    return json.dumps({"format": EXCHANGE_FORMAT, "tool_schema_sha256": tool_schema_sha256(),
                       "request": request, "response": reply, "attempts": attempts}).encode()


def _without_image(message: dict[str, Any], named: str) -> dict[str, Any]:
    if not isinstance(message.get("content"), list):
        return message
    parts = [{"type": "image_url", "image_url": {"url": named}} if p.get("type") == "image_url" else p
             for p in message["content"]]
    return {**message, "content": parts}


def parse_reply(body: dict[str, Any]) -> tuple[Action, str]:
    """The action from a tool call `act`, else from JSON in the message text."""
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ReplyError("no message in the reply") from None
    calls = message.get("tool_calls") or []
    if calls:
        raw = calls[0].get("function", {}).get("arguments", "")
    else:
        found = _FENCE.search(message.get("content") or "")
        if not found:
            raise ReplyError("the reply holds neither a tool call nor JSON")
        raw = found.group(0)
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        raise ReplyError("the tool call's arguments are not JSON") from None
    if not isinstance(data, dict):
        raise ReplyError("the arguments are not an object")
    action = data.get("action", data)
    try:
        return decode_action(msgspec.json.encode(action)), str(data.get("notes", ""))[:500]
    except ActionError as error:
        raise ReplyError(str(error)) from None
