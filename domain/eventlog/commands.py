"""Commands: what staff, the CLI and the scheduler ask the record to do, as typed messages.

The web desk and the CLI build the same Structs and one handler takes each (domain/eventlog/handlers.py). A correction
is a tagged union with one Struct per kind, each with only its own fields: a run is voided by its id alone, a
model is left out of a week by the model and the week, and a message that mixes them does not decode.
"""

from __future__ import annotations

from datetime import date
from typing import Literal
from uuid import UUID

import msgspec

from domain.agent.runs import RunKind
from domain.courses.course import CURRENT_VERSION, load_course
from domain.courses.tasks import kind_for, task_for


class Command(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A request to change the record; it may be refused (the handler raises the domain's error)."""


class ScheduleRun(Command, frozen=True, kw_only=True, tag="schedule_run"):
    """Schedule one run; workers execute every scheduled run they find in the log."""

    station: str
    model: str
    week: str
    """The ISO week it is scheduled for (it counts for the week in which it starts)."""
    requested_by: str
    course_version: str = CURRENT_VERSION
    kind: RunKind = "browser"
    task: str = "shop"
    attempt: int = 1
    repeat: int = 0
    org: str | None = None
    """A registered organisation's private test; None for the public benchmark."""
    target_url: str | None = None
    """An organisation's own store (https), instead of our lab's station."""
    id: UUID | None = None
    """A deterministic id (the schedule's), so that scheduling the same run twice is a no-op."""

    @classmethod
    def on_course(
        cls, *, station: str, model: str, week: str, requested_by: str, course_version: str = CURRENT_VERSION,
        kind: RunKind | None = None, attempt: int = 1, repeat: int = 0, org: str | None = None,
        target_url: str | None = None, id: UUID | None = None,  # noqa: A002 - the event's name
    ) -> ScheduleRun:
        """A run of the course's station, with its kind and task as the course declares them."""
        spec = load_course(course_version).station(station)
        return cls(
            station=station, model=model, week=week, requested_by=requested_by, course_version=course_version,
            kind=kind or kind_for(spec), task=task_for(spec), attempt=attempt, repeat=repeat, org=org,
            target_url=target_url, id=id,
        )


class _Correction(Command, frozen=True, kw_only=True):
    reason: str
    """Why, for the record."""
    public_text: str
    """What the corrections log says to readers."""
    by: str
    """The staff member issuing it."""


class VoidRun(_Correction, frozen=True, kw_only=True, tag="void_run"):
    """The run is not a result (e.g. the lab was down)."""

    run_id: UUID


class SetRunOutcome(_Correction, frozen=True, kw_only=True, tag="set_run_outcome"):
    """The run's outcome was judged wrongly; it now has this one."""

    run_id: UUID
    outcome: str


class NoteOnRun(_Correction, frozen=True, kw_only=True, tag="note_on_run"):
    """Text only: the run's result stands."""

    run_id: UUID


class LeaveModelOut(_Correction, frozen=True, kw_only=True, tag="leave_model_out"):
    """The model is left out of the week's ranking (e.g. a leak of the course)."""

    model: str
    week: str


class NoteOnModelWeek(_Correction, frozen=True, kw_only=True, tag="note_on_model_week"):
    model: str
    week: str


class LeaveStationOut(_Correction, frozen=True, kw_only=True, tag="leave_station_out"):
    """The station is left out of the week for every model (e.g. it was broken)."""

    station: str
    week: str


class NoteOnStationWeek(_Correction, frozen=True, kw_only=True, tag="note_on_station_week"):
    station: str
    week: str


IssueCorrection = (
    VoidRun | SetRunOutcome | NoteOnRun | LeaveModelOut | NoteOnModelWeek | LeaveStationOut | NoteOnStationWeek
)
"""Issue a correction: one of its kinds, each carrying only its own fields."""

CORRECTION_KINDS: dict[tuple[str, str], type[IssueCorrection]] = {
    ("run", "void"): VoidRun,
    ("run", "set_outcome"): SetRunOutcome,
    ("run", "note"): NoteOnRun,
    ("model_week", "exclude"): LeaveModelOut,
    ("model_week", "note"): NoteOnModelWeek,
    ("station_week", "exclude"): LeaveStationOut,
    ("station_week", "note"): NoteOnStationWeek,
}
"""The (target, change) the Correction.Issued event records for each kind."""

corrections_decoder = msgspec.json.Decoder(IssueCorrection)


class RecordManualTest(Command, frozen=True, kw_only=True, tag="record_manual_test"):
    """Record a test checked by hand from its video: one outcome per station tested (one event each)."""

    agent_name: str
    kind: Literal["manual", "real_agent"] = "manual"
    agent_version: str | None = None
    tested_on: date
    """The day the recorded test took place (UTC)."""
    outcomes: dict[str, str]
    """Station code to outcome, for the stations tested."""
    video: str
    """sha256 of the video in the blob store."""
    notes: str = ""
    by: str
    course_version: str = CURRENT_VERSION


class PublishWeek(Command, frozen=True, kw_only=True, tag="publish_week"):
    """Publish the week's ranking and Matrix: provisional while it is in progress, final once it is over."""

    week: str
    by: str
