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
    """One model's answer to the morning check (`canitbuy models check`) before its week's line-up is scheduled."""

    model: str
    available: bool
    """True when the gateway answered one step with a valid action."""
    resolved: str = ""
    """The model id the gateway's reply named."""
    ms: int = 0
    """How long the call took."""
    cost_usd: float = 0.0
    problem: str = ""
    """Why the model is not available, in a few words (empty when it is)."""


class LineUp(Aggregate):
    class Started(Aggregate.Created):
        """The line-up record was opened."""

    class EntrantSet(Aggregate.Event):
        """A model joined the line-up, or its route, price, repeats or dates changed."""

        entrant: Entrant
        by: str
        """Who made the change."""

    class ModelsChecked(Aggregate.Event):
        """The morning check before a week's line-up: which models the gateway could serve. A model that failed
        is not scheduled that week (shown as unavailable, not as a failure at every station)."""

        week: str
        """ISO week, e.g. 2026-W49."""
        results: list[ModelCheckResult]

    def __init__(self) -> None:
        self.entrants: dict[str, Entrant] = {}
        self.checks: dict[str, list[ModelCheckResult]] = {}

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

    def record_check(self, week: str, results: list[ModelCheckResult], *, at: datetime) -> None:
        if week not in self.checks:
            self.trigger_event(self.ModelsChecked, timestamp=at, week=week, results=results)

    def unavailable(self, week: str) -> list[str]:
        """Models the week's check found the gateway could not serve."""
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
    aggregate.checks[self.week] = list(self.results)


LineUp.EntrantSet.apply = _apply_entrant  # type: ignore[method-assign,assignment]
LineUp.ModelsChecked.apply = _apply_check  # type: ignore[method-assign,assignment]
