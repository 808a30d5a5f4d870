"""The replies providers really send through an OpenAI-compatible gateway, each with its documented source.

The local model server answers a route ending in `case-<name>` with the body below, exactly; the test sends it
through the real client and agent (test_agent_provider_replies.py). Sources were read with the documentation
search; each case says where its shape is documented.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

OPENAI_CHAT = "https://platform.openai.com/docs/api-reference/chat/object (the chat completion object)"
OPENAI_TOOLS = "https://developers.openai.com/api/docs/guides/function-calling (arguments: a JSON string)"
OBJECT_ARGS = ("https://docs.rs/agent-block-testkit/0.34.1/agent_block_testkit/shapes/openai/ (arguments as an "
               "object: Gemini's functionCall.args, Ollama, some vLLM parsers behind OpenAI-compatible endpoints)")
ANTHROPIC_COMPAT = ("https://platform.claude.com/docs/en/api/openai-sdk (Claude through the OpenAI SDK: `strict` "
                    "is ignored, so tool JSON is not guaranteed to follow the schema; text may come with tool use)")
GEMINI_COMPAT = "https://ai.google.dev/gemini-api/docs/openai (Gemini's OpenAI compatibility)"
REFUSAL = ("https://developer.broadcom.com/xapis/vmware-private-ai-service-api/latest/data-structures/"
           "ChatCompletionsResponseMessage/ and " + OPENAI_CHAT + " (message.refusal)")
OPENROUTER_USAGE = ("https://openrouter.ai/docs/use-cases/usage-accounting (usage.cost, "
                    "completion_tokens_details.reasoning_tokens, prompt_tokens_details.cached_tokens)")
VERCEL_COMPAT = ("https://vercel.com/docs/ai-gateway/openai-compat (the gateway's chat completions; its reasoning "
                 "configuration and message.reasoning follow OpenRouter's, per "
                 "https://kilo.ai/docs/contributing/architecture/vercel-ai-gateway)")
NO_CHOICES = ("https://docs.rs/openai-ergonomic/0.22.0 (ChatCompletionResponseExt::finish_reason: 'None means the "
              "response has no choices')")

CLICK = {"type": "click", "id": "e7"}
USAGE = {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230}


def body(message: dict[str, Any], *, finish: str = "stop", usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": "gen-1", "object": "chat.completion", "model": "provider/model",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
            "usage": usage if usage is not None else USAGE}


def call(arguments: Any, name: str = "act", n: int = 1) -> dict[str, Any]:
    return {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": arguments}}


ARGS = {"notes": "open the first product", "action": CLICK}


@dataclass(frozen=True)
class Case:
    body: dict[str, Any]
    source: str
    action: dict[str, Any] | None = None
    """The action it must become; None: an invalid reply (the step is spent) or a budget cut."""
    error: str = ""
    """A part of the step's recorded error, for invalid replies."""
    budget_cut: bool = False
    """Cut by our token limit without an action: the run is cut short as our error."""
    usage: dict[str, Any] = field(default_factory=dict)
    """Expected Decision fields for the usage (tokens_in, tokens_out, tokens_reasoning, tokens_cached, cost_usd)."""


CASES: dict[str, Case] = {
    "args_string": Case(body({"content": None, "tool_calls": [call(json.dumps(ARGS))]}, finish="tool_calls"),
                        OPENAI_TOOLS, action=CLICK),
    "args_object": Case(body({"content": None, "tool_calls": [call(ARGS)]}, finish="tool_calls"),
                        OBJECT_ARGS, action=CLICK),
    "text_and_tool_call": Case(body({"content": "I'll open the first product.",
                                     "tool_calls": [call(json.dumps(ARGS))]}, finish="tool_calls"),
                               ANTHROPIC_COMPAT, action=CLICK),
    "several_tool_calls": Case(body({"content": None, "tool_calls": [
        call(json.dumps(ARGS)), call(json.dumps({"action": {"type": "click", "id": "e8"}}), n=2)]},
        finish="tool_calls"), OPENAI_TOOLS + " (parallel function calling)", action=CLICK),
    "several_first_invalid": Case(body({"content": None, "tool_calls": [
        call('{"action": {"type": "click"'), call(json.dumps(ARGS), n=2)]}, finish="tool_calls"),
        ANTHROPIC_COMPAT, action=CLICK),
    "json_fenced": Case(body({"content": "Next:\n```json\n" + json.dumps(ARGS) + "\n```"}), GEMINI_COMPAT,
                        action=CLICK),
    "json_plain": Case(body({"content": json.dumps(ARGS)}), GEMINI_COMPAT, action=CLICK),
    "length_cut": Case(body({"content": ""}, finish="length", usage={
        "prompt_tokens": 1200, "completion_tokens": 400, "total_tokens": 1600,
        "completion_tokens_details": {"reasoning_tokens": 400}}), OPENAI_CHAT + " (finish_reason: length)",
        budget_cut=True),
    "length_with_call": Case(body({"content": None, "tool_calls": [call(json.dumps(ARGS))]}, finish="length"),
                             OPENAI_CHAT, action=CLICK),
    "refusal": Case(body({"content": None, "refusal": "I can't help with purchases."}), REFUSAL,
                    error="the model refused: I can't help with purchases."),
    "no_choices": Case({"id": "gen-2", "object": "chat.completion", "choices": [], "usage": USAGE}, NO_CHOICES,
                       error="the reply has no choices"),
    "unknown_tool": Case(body({"content": None, "tool_calls": [call(json.dumps(ARGS), name="browse")]}),
                         ANTHROPIC_COMPAT, error="unknown tool 'browse'"),
    "usage_plain": Case(body({"content": None, "tool_calls": [call(json.dumps(ARGS))]}), OPENAI_CHAT,
                        action=CLICK, usage={"tokens_in": 1200, "tokens_out": 30, "tokens_reasoning": 0,
                                             "tokens_cached": 0}),
    "usage_reasoning_cached_cost": Case(body(
        {"content": None, "reasoning": "The first product is in stock.", "tool_calls": [call(json.dumps(ARGS))]},
        usage={"prompt_tokens": 1200, "completion_tokens": 530, "total_tokens": 1730,
               "completion_tokens_details": {"reasoning_tokens": 500},
               "prompt_tokens_details": {"cached_tokens": 1000}, "cost": 0.00123}),
        OPENROUTER_USAGE + "; " + VERCEL_COMPAT, action=CLICK,
        usage={"tokens_in": 1200, "tokens_out": 530, "tokens_reasoning": 500, "tokens_cached": 1000,
               "cost_usd": 0.00123}),
}
