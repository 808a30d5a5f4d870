"""The public event schema: every event type with its public name and a typed payload decoder.

Stored events and audit files carry an event's payload as JSON. A payload struct is derived from each event
class's fields, so decoding restores typed values (datetimes, verdicts, actions) without building domain
objects: projections and `audit verify` read payloads directly, which is what makes replays fast.

`MsgspecMapper` is how the record stores events by this schema (its MAPPER_TOPIC): each payload as compact JSON
under the event's topic, decoded back into the struct derived from the event class, so every field keeps its type
(replacing only the transcoder would turn timestamps into strings).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterable
from datetime import datetime
from functools import cache
from typing import Any, cast
from uuid import UUID

import msgspec
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import Mapper, MapperDeserialisationError, StoredEvent
from eventsourcing.utils import get_topic, resolve_topic

from domain.agent.agent_releases import AgentReleases
from domain.agent.lineup import LineUp
from domain.agent.runs import Run
from domain.courses.releases import CourseRelease
from domain.errata.corrections import Correction
from domain.eventlog.topics import OLD_TOPICS
from domain.leaderboards.arc_batches import ArcBatch
from domain.leaderboards.manual_tests import ManualTest
from domain.leaderboards.receipt_ledger import AgentKey, SpentReceipt
from domain.leaderboards.submissions import LeaderboardSubmission, SubmissionDay
from domain.orgs.organisations import Organisation
from domain.week.publications import Week

SCHEMA_VERSION = 1

EVENT_CLASSES: tuple[type[Any], ...] = (
    CourseRelease.Released,
    LineUp.Started,
    LineUp.EntrantSet,
    LineUp.ModelsChecked,
    Run.Scheduled,
    Run.Started,
    Run.StepRecorded,
    Run.Finished,
    Run.CutShort,
    Run.MediaKept,
    Run.TraceCleaned,
    Correction.Issued,
    Correction.Withdrawn,
    Week.Opened,
    Week.Published,
    ManualTest.Recorded,
    LeaderboardSubmission.Submitted,
    LeaderboardSubmission.VerificationStarted,
    LeaderboardSubmission.Verified,
    LeaderboardSubmission.Rejected,
    SubmissionDay.Opened,
    SubmissionDay.Counted,
    Organisation.Registered,
    Organisation.MemberAdded,
    Organisation.MemberRemoved,
    Organisation.ConsentRecorded,
    ArcBatch.Started,
    ArcBatch.Finished,
    AgentReleases.Opened,
    AgentReleases.Released,
    AgentKey.Registered,
    SpentReceipt.Spent,
)

_NOT_STORED = {"originator_id", "originator_version"}


class UnknownEventError(LookupError):
    """An event type this version of CanItBuy does not know."""


def public_name(cls: type[Any]) -> str:
    """e.g. Run.StepRecorded: the name auditors see."""
    return str(cls.__qualname__)


TOPIC_TO_NAME: dict[str, str] = {get_topic(cls): public_name(cls) for cls in EVENT_CLASSES} | {
    topic: public_name(cls) for topic, cls in OLD_TOPICS.items() if cls in EVENT_CLASSES
}
"""Every topic an event may be stored under (its own, and those of domain.eventlog.topics from before a move), to its
name."""
NAME_TO_CLASS: dict[str, type[Any]] = {public_name(cls): cls for cls in EVENT_CLASSES}


@cache
def payload_type(name: str) -> type[msgspec.Struct]:
    """A msgspec struct with the stored fields of the event (everything but originator id and version)."""
    cls = NAME_TO_CLASS.get(name)
    if cls is None:
        raise UnknownEventError(f"unknown event type {name!r}")
    hints = typing.get_type_hints(cls)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for field in dataclasses.fields(cls):
        if field.name in _NOT_STORED:
            continue
        kind = hints[field.name]
        if field.default is not dataclasses.MISSING:
            fields.append((field.name, kind, field.default))
        else:
            fields.append((field.name, kind))
    return msgspec.defstruct(name.replace(".", "_"), fields, kw_only=True, frozen=True)


@cache
def payload_decoder(name: str) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(payload_type(name))


def name_for_topic(topic: str) -> str:
    try:
        return TOPIC_TO_NAME[topic]
    except KeyError:
        raise UnknownEventError(f"unknown event topic {topic!r}") from None


class Envelope(msgspec.Struct, frozen=True):
    """One event of the log as projections see it."""

    position: int
    """Notification-log position (gaps are possible; order is total)."""
    originator_id: str
    originator_version: int
    name: str
    """Public event name, e.g. Run.Finished."""
    payload: Any
    """The decoded payload struct (fields of the event; `timestamp` is when it happened)."""

    @property
    def at(self) -> datetime:
        return typing.cast(datetime, self.payload.timestamp)


_encoder = msgspec.json.Encoder()


def encode_payload(state: dict[str, Any]) -> bytes:
    return _encoder.encode(state)


Columns = tuple[list[Any], list[int], list[str], list[bytes]]
"""Stored events as the recorder's columns: originator ids, originator versions, topics, payloads."""


class MsgspecMapper(Mapper[UUID]):
    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        ids, versions, topics, states = self.to_columns((domain_event,))
        return StoredEvent(originator_id=ids[0], originator_version=versions[0], topic=topics[0], state=states[0])

    def to_columns(self, domain_events: Iterable[DomainEventProtocol[UUID]]) -> Columns:
        """The events as stored, column by column (what `to_stored_event` gives, without an object an event):
        the payload is every attribute of the event but its originator id and version, in the event's order."""
        ids: list[Any] = []
        versions: list[int] = []
        topics: list[str] = []
        states: list[bytes] = []
        encode = _encoder.encode
        for event in domain_events:
            state = dict(vars(event))
            ids.append(state.pop("originator_id"))
            versions.append(state.pop("originator_version"))
            topics.append(get_topic(type(event)))
            states.append(encode(state))
        return ids, versions, topics, states

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        cls = resolve_topic(stored_event.topic)
        try:
            payload = payload_decoder(name_for_topic(stored_event.topic)).decode(stored_event.state)
        except (msgspec.DecodeError, LookupError) as error:
            raise MapperDeserialisationError(
                f"cannot decode {stored_event.topic} of {stored_event.originator_id} "
                f"v{stored_event.originator_version}: {error}"
            ) from error
        state: dict[str, Any] = {f: getattr(payload, f) for f in payload.__struct_fields__}
        originator_id = stored_event.originator_id
        state["originator_id"] = originator_id if isinstance(originator_id, UUID) else UUID(str(originator_id))
        state["originator_version"] = stored_event.originator_version
        event = object.__new__(cls)
        object.__setattr__(event, "__dict__", state)
        return cast(DomainEventProtocol[UUID], event)
