"""The line-up: which models run from which date, by which provider route, at what price."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal
from uuid import NAMESPACE_URL, uuid5

import msgspec
from eventsourcing.domain import Aggregate

LINEUP_ID = uuid5(NAMESPACE_URL, "canitbuy:lineup")


class LineUpError(Exception):
    pass


Reasoning = Literal["none", "low", "medium", "high"]


class Entrant(msgspec.Struct, frozen=True, kw_only=True):
    """A model (or built-in agent) in the line-up."""

    model: str
    """Our name for it, e.g. claude-haiku-5.5 or baseline-robust."""
    label: str
    """As shown to readers, e.g. Claude Haiku 5.5."""
    route: str
    """Provider route through the gateway (e.g. anthropic/claude-haiku-5.5), or builtin."""
    since: date
    """First ISO week day it runs in the weekly course."""
    price_in_per_mtok: float = 0.0
    """US dollars per million input tokens."""
    price_out_per_mtok: float = 0.0
    weekly: bool = True
    """True for the weekly line-up; false for flagships run now and then."""
    repeats: int = 1
    """Runs per station a week (k)."""
    until: date | None = None
    """Last day it runs; null while it stays in the line-up."""
    max_tokens: int = 400
    """Completion tokens one call may spend, reasoning included (the gateway's max_tokens). A reply cut by this
    limit is our error, not the model's failure: a reasoning model needs room to think before it answers."""
    reasoning: Reasoning = "none"
    """The reasoning effort asked of the model through the gateway: none (not asked), low, medium or high."""
    price_cached_in_per_mtok: float | None = None
    """US dollars per million input tokens read from the provider's cache; null: priced as other input."""


class ModelCheckResult(msgspec.Struct, frozen=True, kw_only=True):
    """One model's answer to a check of the line-up (`canitbuy models check`) before its runs are scheduled."""

    model: str
    available: bool
    """True when a reply arrived, usable or not: a model that answers is scheduled and answers for its reply at the
    stations. False when the connection to the model failed (refused, no answer in time, a 5xx or 429 answer after
    the client's retries), or when the gateway refused our request (`gateway_refused`): either way the model was
    not asked, so it is not scheduled and is asked again at the Monday-afternoon check. Checks recorded before this
    rule also counted a reply without a valid action as unavailable."""
    resolved: str = ""
    """The model id the gateway's reply named."""
    ms: int = 0
    """How long the call took."""
    cost_usd: float = 0.0
    problem: str = ""
    """What went wrong, in a few words: why the model is not available, or, when it is, that its reply held no
    valid action (e.g. "unusable reply: ..."); empty when the check passed."""
    gateway_refused: bool = False
    """The gateway refused our request with an HTTP 4xx (a bad key, no credits, a wrong route; `problem` names the
    status): our configuration's problem, neither the model's nor its connection's. `available` is False (the
    model was not asked), and pages say the model was not run because of our configuration, not that it could not
    be reached. Checks recorded before this field have it False (a 4xx then read as the model being unavailable)."""
    cost_estimated: bool = False
    """The reply held no usage we could read (not JSON, or no usage object): cost_usd is our estimate of the prompt
    sent, at the line-up's prices. False in checks recorded before the field."""

    @property
    def passed(self) -> bool:
        """Available, and the reply held a valid action."""
        return self.available and not self.problem


CHECK_ATTEMPTS = 2
"""The check before Monday's line-up (06:00 UTC), and once more at the Monday-afternoon repeat (14:00 UTC) for the
models the first could not reach."""


class LineUp(Aggregate):
    class Started(Aggregate.Created):
        """The line-up record was opened."""

    class EntrantSet(Aggregate.Event):
        """A model joined the line-up, or its route, price, repeats or dates changed."""

        entrant: Entrant
        by: str
        """Who made the change."""

    class ModelsChecked(Aggregate.Event):
        """A check of a week's line-up models through the gateway. The first (attempt 1) is made before the week's
        line-up: a model it could not reach is not scheduled then. The second (attempt 2), at the Monday-afternoon
        repeat, asks those models again: one that answers is scheduled then, one that does not gets no place that
        week (shown as unavailable, not as a failure at every station). Each is recorded once a week."""

        week: str
        """ISO week, e.g. 2026-W49."""
        results: list[ModelCheckResult]
        attempt: int = 1
        """1: the check before Monday's line-up; 2: the Monday-afternoon check of the models the first found
        unavailable. Checks recorded before there was a second have none: they are the first."""
        in_spend: bool = False
        """The check's calls count in the week's spend and its caps (each result's cost_usd): true for every check
        recorded since 7 December 2026. Checks recorded before have it false: their calls were charged too, but the
        spend of their weeks stays what it said (spend.json of weeks already published keeps its bytes)."""

    def __init__(self) -> None:
        self.entrants: dict[str, Entrant] = {}
        self.checks: dict[str, list[ModelCheckResult]] = {}
        """The first check of each week."""
        self.second_checks: dict[str, list[ModelCheckResult]] = {}
        """The Monday-afternoon check of each week that had one."""

    @classmethod
    def open(cls, *, at: datetime) -> LineUp:
        return cls._create(cls.Started, id=LINEUP_ID, timestamp=at)

    def set_entrant(self, entrant: Entrant, *, by: str, at: datetime) -> None:
        if entrant.repeats < 1 or entrant.repeats > 20:
            raise LineUpError("repeats must be between 1 and 20")
        if not 16 <= entrant.max_tokens <= 64000:
            raise LineUpError("max_tokens must be between 16 and 64000")
        if entrant.until is not None and entrant.until < entrant.since:
            raise LineUpError("until comes before since")
        if self.entrants.get(entrant.model) == entrant:
            return
        self.trigger_event(self.EntrantSet, timestamp=at, entrant=entrant, by=by)

    def record_check(self, week: str, results: list[ModelCheckResult], *, at: datetime, attempt: int = 1) -> None:
        """Record a check of the week once per attempt (the first one recorded stands)."""
        if not 1 <= attempt <= CHECK_ATTEMPTS:
            raise LineUpError(f"a week has checks 1 to {CHECK_ATTEMPTS}, not {attempt}")
        if attempt == 2 and week not in self.checks:
            raise LineUpError(f"{week} has no first check to check again")
        if week not in (self.checks if attempt == 1 else self.second_checks):
            self.trigger_event(self.ModelsChecked, timestamp=at, week=week, results=results, attempt=attempt,
                               in_spend=True)

    def checked(self, week: str, attempt: int = 1) -> bool:
        return week in (self.checks if attempt == 1 else self.second_checks)

    def unavailable(self, week: str) -> list[str]:
        """Models the week's checks could not reach: those the first found unavailable, less those the second
        (once it is made) found available."""
        again = {r.model for r in self.second_checks.get(week, []) if r.available}
        return [r.model for r in self.checks.get(week, []) if not r.available and r.model not in again]

    def refused(self, week: str) -> list[str]:
        """Of the week's unavailable models, those whose newest check the gateway refused for our configuration
        (key, credits, route): not run because of us, neither the model's doing nor its connection's."""
        newest = {r.model: r for r in self.checks.get(week, [])}
        newest |= {r.model: r for r in self.second_checks.get(week, [])}
        return [m for m in self.unavailable(week) if newest[m].gateway_refused]

    def to_check_again(self, week: str) -> list[str]:
        """The models the week's second check asks: those the first found unavailable, until it is recorded."""
        if week in self.second_checks:
            return []
        return [r.model for r in self.checks.get(week, []) if not r.available]

    def active_on(self, day: date, *, weekly_only: bool = True) -> list[Entrant]:
        return sorted(
            (
                e for e in self.entrants.values()
                if e.since <= day and (e.until is None or day <= e.until) and (e.weekly or not weekly_only)
            ),
            key=lambda e: e.model,
        )


def _apply_entrant(self: LineUp.EntrantSet, aggregate: LineUp) -> None:
    aggregate.entrants[self.entrant.model] = self.entrant


def _apply_check(self: LineUp.ModelsChecked, aggregate: LineUp) -> None:
    folded = aggregate.checks if self.attempt == 1 else aggregate.second_checks
    folded[self.week] = list(self.results)


LineUp.EntrantSet.apply = _apply_entrant  # type: ignore[method-assign,assignment]
LineUp.ModelsChecked.apply = _apply_check  # type: ignore[method-assign,assignment]
