"""Commands and their handlers, given events / when a command / then the events it recorded (an in-memory record)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.agent.verdicts import Verdict
from domain.errata.corrections import CorrectionError
from domain.eventlog.commands import (
    CORRECTION_KINDS,
    LeaveModelOut,
    LeaveStationOut,
    NoteOnModelWeek,
    NoteOnRun,
    NoteOnStationWeek,
    RecordManualTest,
    ScheduleRun,
    SetRunOutcome,
    VoidRun,
    corrections_decoder,
)
from domain.eventlog.handlers import correction_for, issue_correction, record_manual_test, schedule_runs, would_record
from domain.eventlog.record import Record, UnknownRunError
from domain.eventlog.schema import Envelope
from domain.leaderboards.manual_tests import ManualTestError
from domain.orgs.organisations import OrganisationError
from domain.projections.fold import LogState
from domain.week.publishing import replay

WEEK = "2026-W48"
NOW = datetime(2026, 11, 25, 10, tzinfo=UTC)
STAFF = {"reason": "judge bug", "public_text": "A run was judged wrongly.", "by": "staff@canitbuy.com"}


def a_record() -> Record:
    return Record(clock=lambda: NOW)


def given_a_run(record: Record, station: str = "s03") -> UUID:
    return schedule_runs(record, [ScheduleRun.on_course(station=station, model="m", week=WEEK, requested_by="t")])[0]


def given_a_finished_run(record: Record, station: str = "s03") -> UUID:
    """A run with a verdict: only such a run's outcome is set by a correction."""
    run_id = given_a_run(record, station)
    record.start_run(run_id, worker="w", browser_version="b", agent_version="a")
    record.finish_run(run_id, Verdict(passed=False, outcome="stopped", stage="entry", step=2), steps=2, seconds=3.0)
    return run_id


def then_events(record: Record, after: int) -> list[Envelope]:
    return record.read_log(after=after)


class Replayed:
    """The read side of an in-memory record: its log folded by the domain's own fold, as the read models fold it
    (their query of the same name is tested against this one in tests/integration/store)."""

    def __init__(self, record: Record) -> None:
        self.record, self.state = record, LogState()

    def catch_up(self) -> int:
        self.state = replay(self.record.read_log)
        return self.state.position

    def models_with_runs(self, week: str) -> list[str]:
        return self.state.models_with_runs(week)

    def stations_with_runs(self, week: str) -> list[str]:
        return self.state.stations_with_runs(week)


# --- corrections: one Struct per kind --------------------------------------------------------------------------


def test_a_voided_run_cannot_carry_an_outcome() -> None:
    message = {"type": "void_run", "run_id": str(uuid4()), "outcome": "passed", **STAFF}
    with pytest.raises(msgspec.ValidationError, match="unknown field `outcome`"):
        corrections_decoder.decode(msgspec.json.encode(message))


def test_a_model_left_out_of_a_week_cannot_name_a_run_or_a_station() -> None:
    for extra in ({"run_id": str(uuid4())}, {"station": "s05"}):
        message = {"type": "leave_model_out", "model": "m", "week": WEEK, **extra, **STAFF}
        with pytest.raises(msgspec.ValidationError, match="unknown field"):
            corrections_decoder.decode(msgspec.json.encode(message))


def test_each_kind_decodes_to_its_own_struct_with_only_its_fields() -> None:
    message = {"type": "leave_station_out", "station": "s05", "week": WEEK, **STAFF}
    command = corrections_decoder.decode(msgspec.json.encode(message))
    assert command == LeaveStationOut(station="s05", week=WEEK, **STAFF)
    assert set(LeaveStationOut.__struct_fields__) == {"station", "week", *STAFF}
    assert set(VoidRun.__struct_fields__) == {"run_id", *STAFF}


def test_a_kind_missing_its_own_field_does_not_decode() -> None:
    with pytest.raises(msgspec.ValidationError, match="missing required field `outcome`"):
        corrections_decoder.decode(msgspec.json.encode({"type": "set_run_outcome", "run_id": str(uuid4()), **STAFF}))


def test_voiding_a_run_records_a_void_correction_of_that_run() -> None:
    record = a_record()
    run_id = given_a_run(record)
    before = record.head_position()
    issue_correction(record, Replayed(record), VoidRun(run_id=run_id, **STAFF))
    [event] = then_events(record, before)
    assert event.name == "Correction.Issued"
    p = event.payload
    assert (p.target, p.change, p.run_id, p.model, p.week, p.passed) == ("run", "void", str(run_id), None, None, None)


def test_setting_a_runs_outcome_records_whether_it_passed_from_the_outcome() -> None:
    record = a_record()
    run_id = given_a_finished_run(record)
    before = record.head_position()
    issue_correction(record, Replayed(record), SetRunOutcome(run_id=run_id, outcome="passed", **STAFF))
    [event] = then_events(record, before)
    assert (event.payload.change, event.payload.outcome, event.payload.passed) == ("set_outcome", "passed", True)


def test_every_kind_records_the_target_and_change_it_stands_for() -> None:
    record = a_record()
    run_id = given_a_finished_run(record)
    fields: dict[str, Any] = {"run_id": run_id, "model": "m", "station": "s03", "week": WEEK, "outcome": "stopped"}
    for (target, change), kind in CORRECTION_KINDS.items():
        command = kind(**{f: fields[f] for f in kind.__struct_fields__ if f in fields}, **STAFF)
        correction = correction_for(record, Replayed(record), command)
        assert (correction.target, correction.change) == (target, change)


def test_a_correction_of_a_run_not_in_the_record_is_refused_and_records_nothing() -> None:
    record = a_record()
    before = record.head_position()
    with pytest.raises(UnknownRunError):
        issue_correction(record, Replayed(record), NoteOnRun(run_id=uuid4(), **STAFF))
    assert record.head_position() == before


def test_a_correction_without_a_public_text_is_refused() -> None:
    record = a_record()
    with pytest.raises(CorrectionError, match="public text"):
        issue_correction(record, Replayed(record), LeaveModelOut(model="m", week=WEEK, reason="leak", public_text=" ",
                                                                 by="s"))


class MovingClock:
    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


WEEK_KINDS = ((LeaveModelOut, "model"), (NoteOnModelWeek, "model"), (LeaveStationOut, "station"),
              (NoteOnStationWeek, "station"))
"""The corrections of a model's or a station's week, each with the field it names."""


def test_a_models_or_a_stations_week_is_corrected_only_for_a_week_it_has_a_run_in() -> None:
    record = Record(clock=MovingClock())
    given_a_run(record)  # model m on s03, scheduled for WEEK
    ran = {"model": "m", "station": "s03"}
    never = {"model": (("nobody", WEEK), ("m", "2026-W47")),
             "station": (("s99", WEEK), ("s05", WEEK), ("s03", "2026-W47"))}  # s99: no station of the course
    for kind, what in WEEK_KINDS:
        for name, week in never[what]:
            before = record.head_position()
            with pytest.raises(CorrectionError, match=f"^{what} {name} has no run in {week}: a {what}'s week"):
                issue_correction(record, Replayed(record), kind(**{what: name}, week=week, **STAFF))
            assert record.head_position() == before  # nothing recorded
        issue_correction(record, Replayed(record), kind(**{what: ran[what]}, week=WEEK, **STAFF))
    issued = [(e.payload.model, e.payload.station) for e in then_events(record, 1)]
    assert issued == [("m", None), ("m", None), (None, "s03"), (None, "s03")]


def test_a_run_counts_for_the_week_it_started_in_and_until_it_starts_for_the_week_it_was_scheduled_for() -> None:
    clock = MovingClock()
    record = Record(clock=clock)
    late = given_a_run(record)
    runs = Replayed(record)
    issue_correction(record, runs, NoteOnModelWeek(model="m", week=WEEK, **STAFF))  # scheduled, not started
    issue_correction(record, runs, NoteOnStationWeek(station="s03", week=WEEK, **STAFF))
    clock.now = NOW + timedelta(days=7)  # it starts in the next week: it counts there, no longer in WEEK
    record.start_run(late, worker="w", browser_version="b", agent_version="a")
    with pytest.raises(CorrectionError, match=f"model m has no run in {WEEK}"):
        issue_correction(record, runs, LeaveModelOut(model="m", week=WEEK, **STAFF))
    with pytest.raises(CorrectionError, match=f"station s03 has no run in {WEEK}"):
        issue_correction(record, runs, LeaveStationOut(station="s03", week=WEEK, **STAFF))
    issue_correction(record, runs, LeaveModelOut(model="m", week="2026-W49", **STAFF))
    issue_correction(record, runs, LeaveStationOut(station="s03", week="2026-W49", **STAFF))


def test_a_model_or_a_station_with_only_a_private_test_in_the_week_has_no_run_there() -> None:
    record = a_record()
    record.register_organisation(slug="acme", name="Acme", by="s")
    schedule_runs(record, [ScheduleRun.on_course(station="s01", model="own", week=WEEK, requested_by="t", org="acme")])
    with pytest.raises(CorrectionError, match=f"model own has no run in {WEEK}"):
        issue_correction(record, Replayed(record), LeaveModelOut(model="own", week=WEEK, **STAFF))
    with pytest.raises(CorrectionError, match=f"station s01 has no run in {WEEK}"):
        issue_correction(record, Replayed(record), LeaveStationOut(station="s01", week=WEEK, **STAFF))


def test_a_run_of_a_private_test_takes_no_correction_and_nothing_is_recorded() -> None:
    record = a_record()
    record.register_organisation(slug="acme", name="Acme", by="s")
    [private] = schedule_runs(record, [
        ScheduleRun.on_course(station="s01", model="own", week=WEEK, requested_by="t", org="acme")])
    before = record.head_position()
    for command in (VoidRun(run_id=private, **STAFF), NoteOnRun(run_id=private, **STAFF),
                    SetRunOutcome(run_id=private, outcome="passed", **STAFF)):
        with pytest.raises(CorrectionError, match=f"^run {private} is a private test: it counts for no week"):
            issue_correction(record, Replayed(record), command)
    assert record.head_position() == before


# --- scheduling --------------------------------------------------------------------------------------------------


def test_scheduled_runs_take_the_kind_and_task_the_course_declares_and_are_saved_together() -> None:
    record = a_record()
    commands = [ScheduleRun.on_course(station=s, model="m", week=WEEK, requested_by="t") for s in ("s01", "s12", "s15")]
    ids = schedule_runs(record, commands)
    events = then_events(record, 0)
    assert [e.originator_id for e in events] == [str(i) for i in ids]
    assert [(e.payload.station, e.payload.kind, e.payload.task) for e in events] == [
        ("s01", "browser", "shop"), ("s12", "reader", "read"), ("s15", "browser", "shop_brief")]


def test_a_private_run_of_an_organisation_not_registered_is_refused() -> None:
    record = a_record()
    command = ScheduleRun.on_course(station="s01", model="m", week=WEEK, requested_by="t", org="nobody")
    with pytest.raises(OrganisationError, match="no organisation nobody"):
        schedule_runs(record, [command])
    assert record.head_position() == 0


def test_a_schedule_command_travels_as_json_and_back() -> None:
    command = ScheduleRun.on_course(station="s12", model="m", week=WEEK, requested_by="t", id=uuid4())
    assert msgspec.json.decode(msgspec.json.encode(command), type=ScheduleRun) == command


# --- tests checked by hand ---------------------------------------------------------------------------------------


def manual(**changes: Any) -> RecordManualTest:
    fields: dict[str, Any] = {"agent_name": "Comet", "tested_on": date(2026, 11, 24),
                              "outcomes": {"s01": "passed", "s15": "broke_brief"}, "video": "a" * 64, "by": "s"}
    return RecordManualTest(**(fields | changes))


def test_a_manual_test_records_one_event_per_station_in_the_week_of_its_day() -> None:
    record = a_record()
    record_manual_test(record, manual())
    events = then_events(record, 0)
    assert [(e.name, e.payload.station, e.payload.outcome, e.payload.passed) for e in events] == [
        ("ManualTest.Recorded", "s01", "passed", True), ("ManualTest.Recorded", "s15", "broke_brief", False)]
    assert {(e.payload.week, e.payload.tested_on) for e in events} == {("2026-W48", "2026-11-24")}


def test_breaking_the_brief_outside_a_trap_station_is_refused_and_nothing_is_recorded() -> None:
    record = a_record()
    with pytest.raises(ManualTestError, match="only the trap stations"):
        record_manual_test(record, manual(outcomes={"s01": "passed", "s02": "broke_brief"}))
    assert record.head_position() == 0


def test_a_real_agent_test_needs_the_agents_version() -> None:
    with pytest.raises(ManualTestError, match="version"):
        record_manual_test(a_record(), manual(kind="real_agent"))


# --- what a command would record -----------------------------------------------------------------------------------


def test_what_a_command_would_record_is_what_the_log_gives_back_once_it_is_saved() -> None:
    record = a_record()
    run_id = given_a_finished_run(record)
    after = record.head_position()
    command = SetRunOutcome(run_id=run_id, outcome="stopped", **STAFF)
    [would] = would_record(record, [correction_for(record, Replayed(record), command)], after=after)
    assert record.head_position() == after  # nothing saved
    issue_correction(record, Replayed(record), command)
    [saved] = then_events(record, after)
    assert (would.name, would.position) == (saved.name, saved.position)
    fields = [f for f in saved.payload.__struct_fields__ if f != "timestamp"]
    assert [getattr(would.payload, f) for f in fields] == [getattr(saved.payload, f) for f in fields]
