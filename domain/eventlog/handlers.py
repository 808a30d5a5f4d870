"""The handlers: one per command, each load, act, save through the record.

Each handler first decides (builds the aggregates whose pending events the command would record), then saves
them in one transaction. `would_record` gives what a command would record without saving it, as the log would
give it back: the staff preview folds those events into a copy of the state instead of building a fact by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, time
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.agent.runs import Run
from domain.courses.course import load_course
from domain.errata.corrections import (
    Correction,
    check_model_ran,
    check_not_the_control,
    check_outcome_settable,
    check_run_counts,
    check_station_ran,
)
from domain.eventlog.commands import (
    IssueCorrection,
    LeaveModelOut,
    LeaveStationOut,
    NoteOnModelWeek,
    NoteOnRun,
    NoteOnStationWeek,
    RecordManualTest,
    ScheduleRun,
    SetRunOutcome,
    VoidRun,
)
from domain.eventlog.record import Record, check_target_url
from domain.eventlog.schema import Envelope, name_for_topic, payload_decoder
from domain.leaderboards.manual_tests import KINDS, ManualTest, ManualTestError, check_outcome
from domain.week.weeks import week_of


def schedule_runs(record: Record, commands: Sequence[ScheduleRun]) -> list[UUID]:
    """Schedule runs in one transaction. A private test names a registered organisation (raises
    OrganisationError otherwise) and, when it has one, its own store's https address."""
    runs = [_run(record, command) for command in commands]
    if runs:
        record.save(*runs)
    return [run.id for run in runs]


def _run(record: Record, c: ScheduleRun) -> Run:
    if c.org is not None:
        record.organisation(c.org)
    return Run.schedule(
        station=c.station, model=c.model, course_version=c.course_version, week=c.week, kind=c.kind,
        requested_by=c.requested_by, attempt=c.attempt, repeat=c.repeat, task=c.task, org=c.org,
        target_url=check_target_url(c.target_url), id=c.id, at=record.clock(),
    )


class WeekRuns(Protocol):
    """What issuing a correction reads of the week it names: the read models (adapters/readmodel_queries.py)."""

    def catch_up(self) -> int:
        """Apply every event of the log; return the position reached."""
        ...

    def models_with_runs(self, week: str) -> list[str]:
        """The models with a public run that counts for the week (the week it started in; not started yet, the
        week it was scheduled for)."""
        ...

    def stations_with_runs(self, week: str) -> list[str]:
        """The stations with a public run that counts for the week, as `models_with_runs` counts them."""
        ...


def issue_correction(record: Record, runs: WeekRuns, command: IssueCorrection) -> UUID:
    """Issue a correction; a run it names must exist (raises UnknownRunError) and be public, a model's or a station's
    week it names must hold a run of the model or at the station (raises CorrectionError)."""
    correction = correction_for(record, runs, command)
    record.save(correction)
    return correction.id


def correction_for(record: Record, runs: WeekRuns, command: IssueCorrection) -> Correction:
    """The correction the command issues, not saved yet (the domain's checks raise CorrectionError), checked
    against what the log holds for the week it names."""
    common: dict[str, Any] = {
        "reason": command.reason, "public_text": command.public_text, "by": command.by, "at": record.clock(),
    }
    match command:
        case VoidRun(run_id=run_id):
            _public(record, run_id)
            return Correction.issue(target="run", change="void", run_id=run_id, **common)
        case SetRunOutcome(run_id=run_id, outcome=outcome):
            _public(record, run_id)
            check_outcome_settable(run_id, record.get_run(run_id).status)
            return Correction.issue(target="run", change="set_outcome", run_id=run_id, outcome=outcome,
                                    passed=outcome == "passed", **common)
        case NoteOnRun(run_id=run_id):
            _public(record, run_id)
            return Correction.issue(target="run", change="note", run_id=run_id, **common)
        case LeaveModelOut(model=model, week=week):
            correction = Correction.issue(target="model_week", change="exclude", model=model, week=week, **common)
            return _of_a_model_that_ran(correction, runs, model, week)
        case NoteOnModelWeek(model=model, week=week):
            correction = Correction.issue(target="model_week", change="note", model=model, week=week, **common)
            return _of_a_model_that_ran(correction, runs, model, week)
        case LeaveStationOut(station=station, week=week):
            correction = Correction.issue(target="station_week", change="exclude", station=station, week=week,
                                          **common)
            _of_a_station_that_ran(correction, runs, station, week)
            check_not_the_control(station, load_course().control.code)
            return correction
        case NoteOnStationWeek(station=station, week=week):
            correction = Correction.issue(target="station_week", change="note", station=station, week=week, **common)
            return _of_a_station_that_ran(correction, runs, station, week)


def _public(record: Record, run_id: UUID) -> None:
    check_run_counts(run_id, record.get_run(run_id).org)


def _of_a_model_that_ran(correction: Correction, runs: WeekRuns, model: str, week: str) -> Correction:
    runs.catch_up()  # the read models as the log stands now, so a run just scheduled counts
    check_model_ran(model, week, runs.models_with_runs(week))
    return correction


def _of_a_station_that_ran(correction: Correction, runs: WeekRuns, station: str, week: str) -> Correction:
    runs.catch_up()  # as for a model: the log as it stands now
    check_station_ran(station, week, runs.stations_with_runs(week))
    return correction


def record_manual_test(record: Record, command: RecordManualTest) -> list[UUID]:
    """Record a test checked by hand, one event per station tested, in one transaction; the outcomes follow the
    course's scoring (raises ManualTestError)."""
    tests = manual_tests_for(record, command)
    record.save(*tests)
    return [test.id for test in tests]


def manual_tests_for(record: Record, c: RecordManualTest) -> list[ManualTest]:
    if not c.agent_name.strip():
        raise ManualTestError("name the agent tested, e.g. ChatGPT agent")
    if c.kind not in KINDS:
        raise ManualTestError(f"the kind is one of {', '.join(KINDS)}")
    if not c.outcomes:
        raise ManualTestError("give the outcome of at least one station")
    course = load_course(c.course_version)
    for station, outcome in c.outcomes.items():
        if station not in course.codes:
            raise ManualTestError(f"no station {station!r} in course {course.version}")
        check_outcome(course, station, outcome)
    week = week_of(datetime.combine(c.tested_on, time(12), tzinfo=UTC))
    return [
        ManualTest.record(
            agent_name=c.agent_name.strip(), station=station, week=week, course_version=course.version,
            passed=outcome == "passed", outcome=outcome, video=c.video, notes=c.notes.strip(), by=c.by,
            at=record.clock(), kind=c.kind, agent_version=c.agent_version, tested_on=c.tested_on.isoformat(),
        )
        for station, outcome in c.outcomes.items()
    ]


def would_record(record: Record, aggregates: Sequence[Aggregate], after: int) -> list[Envelope]:
    """The events the aggregates would save, as reading the log would give them back, at the positions after
    `after`; nothing is saved."""
    envelopes: list[Envelope] = []
    for aggregate in aggregates:
        for event in aggregate.collect_events():
            stored = record.mapper.to_stored_event(event)
            name = name_for_topic(stored.topic)
            envelopes.append(Envelope(
                after + len(envelopes) + 1, str(stored.originator_id), stored.originator_version, name,
                payload_decoder(name).decode(stored.state),
            ))
    return envelopes
