"""ModelAgent: a model behind the gateway deciding each step through the `act` tool (or JSON as a fallback).

A reply that holds no valid action costs the step. The whole exchange goes to the blob store and the step names
it: the request exactly as sent (the screenshot replaced by its sha256, which names the step's screenshot blob),
the tool schema's sha256 and the raw reply. The key is in the client's headers and never reaches it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from adapters.models.charges import charged, unread
from adapters.models.client import CallState, HttpxModelClient
from adapters.models.prompt import TEMPERATURE, act_tool, messages, tool_schema_sha256
from adapters.models.replies import BudgetCutError, ReplyError, finish_reason, parse_reply
from domain.agent.agent_ports import Decision, Task
from domain.agent.lineup import Entrant
from domain.agent.observation import Observation
from domain.agent.ports import BlobStore, StepRecord

EXCHANGE_FORMAT = "canitbuy-exchange/1"
__all__ = ["EXCHANGE_FORMAT", "ModelAgent", "ReplyError", "exchange_json", "parse_reply", "request_payload"]


def request_payload(model: Entrant, chat: list[dict[str, Any]]) -> dict[str, Any]:
    """The request for one step: the entrant's own token limit, and its reasoning effort when it has one (the
    gateway's `reasoning` object, which it translates to each provider's setting)."""
    payload: dict[str, Any] = {"model": model.route, "messages": chat, "tools": [act_tool()], "tool_choice": "auto",
                               "temperature": TEMPERATURE, "max_tokens": model.max_tokens}
    if model.reasoning != "none":
        payload["reasoning"] = {"effort": model.reasoning}
    return payload


class ModelAgent:
    def __init__(self, client: HttpxModelClient, model: Entrant, blobs: BlobStore) -> None:
        self._client, self._model, self._blobs = client, model, blobs
        self.name, self.version = model.model, model.route
        self._call: CallState | None = None
        """The call in flight (one agent per run, so one at a time), or the last one, cancelled or failed; None once
        it answered."""
        self._sent: tuple[dict[str, Any], bytes] | None = None
        """The request of the call in flight and the screenshot it shows, until it answered."""
        self._waited = 0.0
        """Seconds the run's settled calls waited for a free place under our own limit on calls at once."""

    def connection_trouble(self) -> str | None:
        """The newest failure of the model call in flight (ModelLink): the episode asks when its time ran out."""
        call = self._call
        return call.problem if call is not None and call.failures else None

    def our_wait(self) -> float:
        """Seconds the run's calls have waited for our own limit on calls at once (ModelLink): the episode's clock
        does not count them in the run's seconds."""
        call = self._call
        return self._waited + (call.our_wait() if call is not None else 0.0)

    def dropped_call(self) -> Decision | None:
        """The call the episode dropped when the run's time ran out (ModelLink). When its request was on its way
        (sent, no answer read), the provider may charge for it and reports nothing: its prompt, with our estimate of
        its input tokens at the line-up's prices, marked estimated, and the request kept as its exchange (with no
        response). None when no request was on its way (the call waited for a free place, or between attempts)."""
        call, sent = self._call, self._sent
        if call is None or sent is None or not call.sending:
            return None
        payload, screenshot = sent
        exchange = self._blobs.put(exchange_json(payload, screenshot, None, call.failures + 1))
        return unread(self._model, payload).decision(model_ms=0, exchange=exchange)

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision:
        payload = request_payload(self._model, messages(observation, task, history))
        self._settle()
        self._call = call = CallState()
        self._sent = (payload, observation.screenshot)
        reply = await self._client.complete(payload, call)
        self._settle()
        self._sent = None
        exchange = self._blobs.put(exchange_json(payload, observation.screenshot, reply.body, reply.attempts))
        charge = charged(self._model, payload, reply.body)
        spent = charge.decision(model_ms=reply.ms, exchange=exchange)
        try:
            parsed = parse_reply(reply.body)
        except ReplyError as error:
            if finish_reason(reply.body) == "length":
                # The limit is ours: the run says nothing about the model, so it is cut short, not failed. The
                # call was charged: its usage goes with the error, and the episode records it as the step.
                raise BudgetCutError(
                    f"the reply was cut by our limit of {self._model.max_tokens} completion tokens "
                    f"({charge.reasoning} spent reasoning) before it held an action", spent=spent) from None
            return _with(spent, error=str(error))
        notes = parsed.notes
        if parsed.ignored_calls:
            notes = f"{notes} [{parsed.ignored_calls} further tool call(s) in the reply not carried out]".strip()
        return _with(spent, action=parsed.action, notes=notes)


    def _settle(self) -> None:
        """The last call's wait for a free place, counted once it is no longer the call in flight."""
        if self._call is not None:
            self._waited += self._call.our_wait()
            self._call = None


def _with(decision: Decision, **changes: Any) -> Decision:
    return msgspec.structs.replace(decision, **changes)


def exchange_json(payload: dict[str, Any], screenshot: bytes, reply: dict[str, Any] | None, attempts: int) -> bytes:
    """The exchange as recorded. The image (already stored as the step's screenshot) is named, not repeated. The
    response is null for a call dropped before it answered."""
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
