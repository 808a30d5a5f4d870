"""Reading a chat-completions reply as the gateway passes it on: the action, the usage, and why there is none.

Providers answer the same request in different shapes (see tests/unit/agent/test_provider_replies.py for each
shape met and its documented source). The rules:

- the first `act` tool call whose arguments decode to a valid action counts; further tool calls are noted, never
  carried out (one action a step);
- tool-call arguments may be a JSON string (OpenAI) or an object (some OpenAI-compatible layers);
- without a tool call, JSON in the message text counts, fenced or not;
- a refusal, an empty `choices`, or text without an action is an invalid reply: it costs the model the step;
- a reply cut by our own token limit (`finish_reason: "length"`) with no valid action in it is our error
  (BudgetCutError, which carries the call's usage: it was charged, and the run records it as a step).
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from domain.agent.actions import Action, ActionError, decode_action
from domain.agent.agent_ports import BudgetCutError

__all__ = ["BudgetCutError", "Parsed", "ReplyError", "Usage", "finish_reason", "parse_reply", "usage_of"]

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class ReplyError(ValueError):
    """A reply that holds no valid action: the model's step is spent."""


class Parsed(msgspec.Struct, frozen=True):
    action: Action
    notes: str
    ignored_calls: int = 0
    """Further tool calls in the same reply, recorded in the exchange and not carried out."""


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """A reply's usage as reported: OpenAI's usage object with its details, and the gateway's cost when given."""

    tokens_in: int = 0
    tokens_out: int = 0
    """Completion tokens, reasoning included."""
    reasoning: int = 0
    """Of the completion tokens, those spent reasoning (completion_tokens_details.reasoning_tokens)."""
    cached: int = 0
    """Of the prompt tokens, those read from the provider's cache (prompt_tokens_details.cached_tokens)."""
    cost_reported: float | None = None
    """US dollars, when the gateway reports the call's cost (usage.cost)."""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def usage_of(body: dict[str, Any]) -> Usage:
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    completion = usage.get("completion_tokens_details")
    prompt = usage.get("prompt_tokens_details")
    cost = usage.get("cost")
    return Usage(
        tokens_in=_int(usage.get("prompt_tokens")), tokens_out=_int(usage.get("completion_tokens")),
        reasoning=_int(completion.get("reasoning_tokens")) if isinstance(completion, dict) else 0,
        cached=_int(prompt.get("cached_tokens")) if isinstance(prompt, dict) else 0,
        cost_reported=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


def finish_reason(body: dict[str, Any]) -> str:
    try:
        return str(body["choices"][0].get("finish_reason") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


def _message(body: dict[str, Any]) -> dict[str, Any]:
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ReplyError("the reply has no choices")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise ReplyError("no message in the reply")
    return message


def _text(content: object) -> str:
    """The message text: a string, or a list of parts (`{"type": "text", "text": ...}`)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _decode(raw: object) -> tuple[Action, str]:
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


def parse_reply(body: dict[str, Any]) -> Parsed:
    """The action of a reply, or ReplyError saying why there is none."""
    message = _message(body)
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    if calls:
        first_error: ReplyError | None = None
        for index, call in enumerate(calls):
            named = call.get("function")
            function: dict[str, Any] = named if isinstance(named, dict) else {}
            if function.get("name", "act") != "act":
                first_error = first_error or ReplyError(f"the model called an unknown tool {function.get('name')!r}")
                continue
            try:
                action, notes = _decode(function.get("arguments", ""))
            except ReplyError as error:
                first_error = first_error or error
                continue
            return Parsed(action, notes, ignored_calls=len(calls) - index - 1)
        raise first_error or ReplyError("no valid tool call")
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        raise ReplyError(f"the model refused: {refusal.strip()[:200]}")
    found = _JSON_OBJECT.search(_text(message.get("content")))
    if not found:
        raise ReplyError("the reply holds neither a tool call nor JSON")
    action, notes = _decode(found.group(0))
    return Parsed(action, notes)
