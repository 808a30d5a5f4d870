"""What one call to a model cost: the one place a call becomes a recorded cost (the browser agent's steps, the s12
reader's call, the Monday model check).

A call whose reply reports its usage costs what the gateway reported (`usage.cost`) or, without it, the reported
tokens at the line-up's prices (/agent). Two calls the provider may charge for report no usage we can read:

- an HTTP 200 whose body is not a chat completion with a usage object (not JSON, or JSON without `usage`): the
  gateway answered, so the provider may have charged, and we cannot read what;
- a call dropped when the run's 150 seconds ran out while its request was on its way (sent, no answer read yet).

We know what we sent, so such a call is recorded with our estimate of the prompt's input tokens (`prompt_tokens`),
no output tokens, priced at the line-up's prices, and marked `estimated`: an honest lower bound of what the
provider may have charged, never a figure it reported. A call that never left us (still waiting for a free place
under our own limit on calls at once) or that got no answer at all (the connection failed) was charged nothing.
"""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec

from adapters.models.lineup import cost_usd
from adapters.models.replies import usage_of
from domain.agent.agent_ports import Decision
from domain.agent.lineup import Entrant

CHARS_PER_TOKEN = 4
"""ASSUMPTION: about four characters of English text or JSON a token, the rule of thumb OpenAI and Anthropic give."""
IMAGE_TOKENS = 1365
"""ASSUMPTION: the tokens one 1280 x 800 screenshot counts as input: Anthropic's rule, width x height / 750, the
highest of the line-up's providers (OpenAI's high detail counts 765 or more for it)."""


class Charge(msgspec.Struct, frozen=True, kw_only=True):
    """One call's tokens and cost as recorded."""

    tokens_in: int = 0
    tokens_out: int = 0
    """Completion tokens, reasoning included."""
    reasoning: int = 0
    cached: int = 0
    cost_usd: float = 0.0
    estimated: bool = False
    """No usage could be read: tokens_in is our estimate of the prompt sent, priced at the line-up's prices."""

    def decision(self, *, model_ms: int, exchange: str | None) -> Decision:
        """The call as a decision with no action yet (the caller adds the action, notes or error)."""
        return Decision(action=None, tokens_in=self.tokens_in, tokens_out=self.tokens_out,
                        tokens_reasoning=self.reasoning, tokens_cached=self.cached, cost_usd=self.cost_usd,
                        model_ms=model_ms, exchange=exchange, estimated=self.estimated)


def charged(model: Entrant, payload: dict[str, Any], body: Any) -> Charge:
    """The cost of a call that was answered with `body` (the client's: a dict, `{"unparsed": text}` when it was
    not JSON): as the reply reports it, or our estimate of the prompt when it reports no usage."""
    if not isinstance(body, dict) or not isinstance(body.get("usage"), dict):
        return unread(model, payload)
    usage = usage_of(body)
    ours = cost_usd(model, usage.tokens_in, usage.tokens_out, cached=usage.cached)
    return Charge(tokens_in=usage.tokens_in, tokens_out=usage.tokens_out, reasoning=usage.reasoning,
                  cached=usage.cached, cost_usd=ours if usage.cost_reported is None else usage.cost_reported)


def unread(model: Entrant, payload: dict[str, Any]) -> Charge:
    """A call the provider may have charged for with no usage we can read: the prompt's input tokens, estimated."""
    tokens = prompt_tokens(payload)
    return Charge(tokens_in=tokens, cost_usd=cost_usd(model, tokens, 0), estimated=True)


def prompt_tokens(payload: dict[str, Any]) -> int:
    """Our estimate of the input tokens of a chat-completions request: its text (the messages, the tool schema,
    the answer's schema) at CHARS_PER_TOKEN, and IMAGE_TOKENS for each image."""
    images = 0
    texts: list[str] = []
    for message in payload.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                images += 1
            elif isinstance(part, dict):
                texts.append(str(part.get("text", "")))
    for extra in ("tools", "response_format"):
        if payload.get(extra):
            texts.append(json.dumps(payload[extra], separators=(",", ":")))
    return math.ceil(sum(len(t) for t in texts) / CHARS_PER_TOKEN) + images * IMAGE_TOKENS
