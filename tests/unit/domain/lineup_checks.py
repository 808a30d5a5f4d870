"""The week's model checks as the line-up tests build them: a model reached, one whose connection failed, a line-up
checked on Monday morning, and a line-up replayed from its events through the public schema, each stored event's
state changed first as a test says (to store it as an older version did)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

import msgspec
from eventsourcing.persistence import JSONTranscoder, StoredEvent

from domain.agent.lineup import LineUp, ModelCheckResult
from domain.eventlog.schema import MsgspecMapper

WEEK = "2026-W49"
MORNING = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
AFTERNOON = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)


def reached(model: str, problem: str = "") -> ModelCheckResult:
    return ModelCheckResult(model=model, available=True, resolved=f"test/{model}", ms=120, problem=problem)


def unreachable(model: str) -> ModelCheckResult:
    return ModelCheckResult(model=model, available=False, ms=60_000, problem="connection refused")


def checked_in_the_morning(*results: ModelCheckResult) -> LineUp:
    lineup = LineUp.open(at=MORNING)
    lineup.record_check(WEEK, list(results), at=MORNING)
    return lineup


def replayed_as_stored(events: list[Any], older: Callable[[dict[str, Any]], bool] | None = None) -> LineUp:
    """The line-up rebuilt from its events as the public schema stores them (what a restart or a replay reads).
    `older` may change an event's decoded state in place, as an older version stored it; it says whether it did."""
    mapper = MsgspecMapper(transcoder=JSONTranscoder())
    lineup: LineUp | None = None
    for event in events:
        stored = mapper.to_stored_event(event)
        if older is not None and older(state := msgspec.json.decode(stored.state)):
            stored = StoredEvent(originator_id=stored.originator_id, originator_version=stored.originator_version,
                                 topic=stored.topic, state=msgspec.json.encode(state))
        lineup = cast(Any, mapper.to_domain_event(stored)).mutate(lineup)
    assert isinstance(lineup, LineUp)
    return lineup
