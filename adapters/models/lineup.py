"""The weekly line-up as data: our model names, the gateway's model ids, and prices.

Prices are US dollars per million tokens. ASSUMPTION: they are plausible list prices for the fast, low-cost
tier of each provider in late 2026, not quoted from the gateway; correct them here when the gateway's price
list is at hand (a change of price changes recorded costs from then on, never past events).
"""

from __future__ import annotations

from datetime import date

from domain.agent.lineup import Entrant

SINCE = date(2026, 10, 22)

WEEKLY: tuple[Entrant, ...] = (
    Entrant(model="gpt-6-luna", label="GPT-6 Luna", route="openai/gpt-6-luna", since=SINCE,
            price_in_per_mtok=0.25, price_out_per_mtok=2.00, max_tokens=4000, reasoning="low"),
    Entrant(model="claude-haiku-5.5", label="Claude Haiku 5.5", route="anthropic/claude-haiku-5.5", since=SINCE,
            price_in_per_mtok=1.00, price_out_per_mtok=5.00, max_tokens=1024),
    Entrant(model="gemini-3.8-flash", label="Gemini 3.8 Flash", route="google/gemini-3.8-flash", since=SINCE,
            price_in_per_mtok=0.30, price_out_per_mtok=2.50, max_tokens=4000, reasoning="low"),
    Entrant(model="qwen-3.8-flash", label="Qwen 3.8 Flash", route="alibaba/qwen-3.8-flash", since=SINCE,
            price_in_per_mtok=0.05, price_out_per_mtok=0.40, max_tokens=1024),
    Entrant(model="nova-2-lite", label="Amazon Nova 2 Lite", route="amazon/nova-2-lite", since=SINCE,
            price_in_per_mtok=0.30, price_out_per_mtok=2.50, max_tokens=1024),
)
"""Token limits and reasoning: ASSUMPTION, as the prices. Models that think before they answer by default (GPT,
Gemini Flash) are asked for low effort and given 4,000 completion tokens, so thinking does not crowd out the
answer; the others answer in far fewer than 1,024. A reply cut by the limit is recorded as our error."""

FLAGSHIP: tuple[Entrant, ...] = (
    Entrant(model="gpt-6", label="GPT-6 (flagship)", route="openai/gpt-6", since=SINCE, weekly=False,
            price_in_per_mtok=5.00, price_out_per_mtok=40.00, max_tokens=8000, reasoning="medium"),
    Entrant(model="claude-opus-5.5", label="Claude Opus 5.5 (flagship)", route="anthropic/claude-opus-5.5",
            since=SINCE, weekly=False, price_in_per_mtok=15.00, price_out_per_mtok=75.00, max_tokens=8000,
            reasoning="medium"),
    Entrant(model="gemini-3.8-pro", label="Gemini 3.8 Pro (flagship)", route="google/gemini-3.8-pro", since=SINCE,
            weekly=False, price_in_per_mtok=5.00, price_out_per_mtok=40.00, max_tokens=8000, reasoning="medium"),
)
"""The flagship line-up: about twenty times the price of the weekly models, so measured now and then, not weekly
(the method): on the first Monday of each month, under its own spending cap (CANITBUY_FLAGSHIP_CAP_USD). Its runs
are scored in that week's ranking and Matrix by the same rules, labelled "(flagship)". ASSUMPTION: routes and
prices as for WEEKLY."""

BASELINES: tuple[str, ...] = (
    "baseline-naive", "baseline-patient", "baseline-structured", "baseline-careful", "baseline-robust")


def entrant(name: str) -> Entrant | None:
    """A line-up model (weekly or flagship) by our name or by its gateway id."""
    return next((e for e in (*WEEKLY, *FLAGSHIP) if name in (e.model, e.route)), None)


def is_flagship(model: str) -> bool:
    return any(model in (e.model, e.route) for e in FLAGSHIP)


def cost_usd(model: Entrant, tokens_in: int, tokens_out: int, *, cached: int = 0) -> float:
    """Our price of a call. Reasoning tokens are part of the completion tokens (OpenAI's usage object counts
    them there, and providers bill them as output), so they are priced as output. Cached input tokens are part
    of the prompt tokens; the entrant may price them lower."""
    cached = min(max(cached, 0), tokens_in)
    cached_price = model.price_in_per_mtok if model.price_cached_in_per_mtok is None else model.price_cached_in_per_mtok
    dollars = ((tokens_in - cached) * model.price_in_per_mtok + cached * cached_price
               + tokens_out * model.price_out_per_mtok) / 1e6
    return round(dollars, 8)


ESTIMATED_STEPS = 10
ESTIMATED_PROMPT_TOKENS = 3000
"""A step's prompt: the system prompt, the tool schema, the element list and the screenshot."""


def estimated_run_usd(model: str) -> float:
    """What one run of a line-up model is expected to cost before any has ended this week: ten steps of a
    3,000-token prompt and a reply of half the model's token limit. The built-in agents cost nothing."""
    found = entrant(model)
    if found is None:
        return 0.0
    return ESTIMATED_STEPS * cost_usd(found, ESTIMATED_PROMPT_TOKENS, found.max_tokens // 2)
