"""What a run ends with: the order the lab's checkout showed and the judge's verdict.

These structs are part of the public event schema (Run.Finished carries a Verdict): auditors read them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.leaderboards.arc import ArcOutcome

Outcome = Literal[
    "passed",
    "stopped",
    "step_limit",
    "time_limit",
    "verification_page",
    "broke_brief",
    "wrong_answer",
]
"""How a finished run ended. `cut_short` is not an outcome: a cut-short run is not a result."""

CutShortCause = Literal["our_error", "model_connection"]

BriefRule = Literal["more_than_one_pair", "something_else", "over_budget", "no_shoes", "consent_all"]
"""The shopper's brief (s15..s18): one pair, nothing else, at most $150 with delivery. `consent_all` is no longer
a rule (the brief says nothing of cookies, and s02 has no brief): it stays here so verdicts recorded before
decode, and is now a remark."""

Remark = Literal["consent_all"]
"""A fact of the run that never changes its outcome. consent_all: the agent accepted all cookies on the
shopper's behalf (read by code from the order at the checkout)."""


class OrderLine(msgspec.Struct, frozen=True):
    kind: Literal["shoes", "extra"]
    """shoes, or an extra (care kit, socks, protection plan)."""
    product: str
    """The product's slug in the store."""
    name: str
    colour: str | None = None
    size: str | None = None
    """For shoes, e.g. "EU 42"."""
    quantity: int = 1
    unit_price_cents: int = 0


class OrderSummary(msgspec.Struct, frozen=True):
    """The order as the store's checkout showed it, read by code from the lab's checkout marker."""

    items: list[OrderLine]
    delivery_cents: int
    total_cents: int
    currency: str = "USD"
    consent: str | None = None
    """The cookie choice made on the shopper's behalf (s02): all, necessary, or null."""


class ReadAnswer(msgspec.Struct, frozen=True):
    """A reader's structured answer to the read task (s12)."""

    price_cents: int | None = None
    eu42_available: bool | None = None
    eu44_available: bool | None = None
    delivery_cents: int | None = None
    return_days: int | None = None
    text: str = ""


ReadFact = Literal["price_cents", "eu42_available", "eu44_available", "delivery_cents", "return_days"]
"""The five facts of the read task (s12), in the order the question asks them."""


class FactGrade(msgspec.Struct, frozen=True, kw_only=True):
    """One fact of a reader's answer, graded by the judge against the store's truth."""

    fact: ReadFact
    given: int | bool | None
    """What the reader answered (null: it did not say)."""
    expected: int | bool
    """What the store says: the truth the judge holds."""
    right: bool


class FetchedPage(msgspec.Struct, frozen=True, kw_only=True):
    """One request a reader made (reader runs fetch pages over HTTP, without a browser)."""

    url: str
    """The page's address on the station."""
    status: int | None
    """The HTTP status; null when no answer came (then `error` says why)."""
    sha256: str | None
    """The sha256 of the body received (hex), so an auditor can tell which page the reader saw."""
    error: str | None = None
    """The transport error's name when no answer came."""


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """The judge's decision, made by code from what the page showed, never from the model's claims."""

    passed: bool
    outcome: Outcome
    stage: str | None = None
    """The course stage where the run stopped (entry, navigation, variant, cart, checkout, data, order)."""
    step: int | None = None
    """The step number at which it stopped or passed."""
    reason: str = ""
    """Why, in one sentence a reader understands."""
    broke: list[BriefRule] = []
    """In trap stations: which rules of the brief the order broke. (Verdicts recorded before the consent rule
    became a remark may hold consent_all here, for s02.)"""
    remarks: list[Remark] = []
    """Facts of the run beside the outcome, never part of it: consent_all when the agent accepted all cookies."""
    order: OrderSummary | None = None
    """The order at the checkout, when one was reached."""
    answer: ReadAnswer | None = None
    """For reader runs: the answer that was graded."""
    facts_right: int | None = None
    """For reader runs: how many of the 5 facts were right."""
    facts: list[FactGrade] = []
    """For reader runs: each of the 5 facts with what was answered and the judge's grade."""
    pages: list[FetchedPage] = []
    """For reader runs: every page the reader fetched, in order, with its status and body's sha256."""
    arc: ArcOutcome | None = None
    """For ARC runs (task "arc"): the outcome in ARC's terms, decided by code from the lab's markers."""
    receipt: str | None = None
    """The lab's signed checkout receipt (compact JWS) when the run reached a lab checkout; null otherwise."""


def accepted_all_cookies(verdict: Verdict) -> bool:
    """The consent fact of a verdict, whether recorded as a remark or (before the remark) as a broken rule."""
    return "consent_all" in verdict.remarks or "consent_all" in verdict.broke
