"""A correction of a model's or a station's week names a model or a station that ran that week, as the log holds it
(the read models caught up by the use case), on SQLite and PostgreSQL: a run counts for the week it started in, one
not started yet for the week it was scheduled for, and a private test for none."""

from __future__ import annotations

import pytest
from record_builders import COURSE, WEEK, finished_run, into_week, write_week

from domain.errata.corrections import CorrectionError
from domain.eventlog.commands import (
    LeaveModelOut,
    LeaveStationOut,
    NoteOnModelWeek,
    NoteOnStationWeek,
    ScheduleRun,
    SetRunOutcome,
    VoidRun,
)
from domain.eventlog.handlers import issue_correction, schedule_runs
from domain.week.publishing import replay

NEXT = "2026-W49"
LATER = "2026-W50"
STAFF = {"reason": "leak", "public_text": "The model saw the course.", "by": "staff@canitbuy.com"}


def test_a_model_or_a_station_without_a_run_in_the_week_is_refused_and_nothing_is_recorded(record, readmodels):
    write_week(record, {"a": 17, "b": 9})
    write_week(record, {"a": 3}, week=NEXT)
    write_week(record, {"own": 17}, week=NEXT, org="acme")  # a private test counts for no week
    record.save(finished_run(record, "a", "s01", True, LATER),
                finished_run(record, "own", "s05", True, LATER, org="acme"))  # s05's one run in LATER is private
    never = {"model": (("b", NEXT), ("nobody", WEEK), ("own", NEXT), ("a", "2026-W47")),
             "station": (("s99", WEEK), ("s02", LATER), ("s05", LATER), ("s01", "2026-W47"))}
    for kind, what in ((LeaveModelOut, "model"), (NoteOnModelWeek, "model"), (LeaveStationOut, "station"),
                       (NoteOnStationWeek, "station")):
        for name, week in never[what]:
            head = record.head_position()
            with pytest.raises(CorrectionError, match=f"^{what} {name} has no run in {week}: a {what}'s week is "):
                issue_correction(record, readmodels, kind(**{what: name}, week=week, **STAFF))
            assert record.head_position() == head
    issue_correction(record, readmodels, LeaveModelOut(model="b", week=WEEK, **STAFF))
    issue_correction(record, readmodels, NoteOnModelWeek(model="a", week=NEXT, **STAFF))
    issue_correction(record, readmodels, LeaveStationOut(station="s18", week=WEEK, **STAFF))
    issue_correction(record, readmodels, NoteOnStationWeek(station="s01", week=LATER, **STAFF))
    readmodels.catch_up()
    log = readmodels.corrections()
    assert b"nobody" not in log and b'"own"' not in log and b"s99" not in log and b'"s05"' not in log


def test_the_read_models_queries_give_the_models_and_the_stations_the_fold_gives(record, readmodels):
    write_week(record, {"a": 17, "b": 9})
    _, moved = schedule_runs(record, [ScheduleRun.on_course(station=s, model=m, week=WEEK, requested_by="t")
                                      for m, s in (("waiting", "s01"), ("moved", "s07"))])
    into_week(record, NEXT)
    record.start_run(moved, worker="w", browser_version="b", agent_version="a")  # it counts for NEXT now
    record.save(finished_run(record, "c", "s03", False, NEXT))
    write_week(record, {"own": 1}, week=NEXT, org="acme")  # every station, none of them counting
    readmodels.catch_up()
    folded = replay(record.read_log)
    for week in (WEEK, NEXT, "2026-W47"):
        assert readmodels.models_with_runs(week) == folded.models_with_runs(week)
        assert readmodels.stations_with_runs(week) == folded.stations_with_runs(week)
    assert readmodels.models_with_runs(WEEK) == ["a", "b", "waiting"]
    assert readmodels.models_with_runs(NEXT) == ["c", "moved"]
    assert readmodels.stations_with_runs(WEEK) == sorted(COURSE.codes)
    assert readmodels.stations_with_runs(NEXT) == ["s03", "s07"]


def test_a_run_counts_for_the_week_it_was_scheduled_for_until_it_starts_then_for_the_week_it_started_in(
        record, readmodels):
    readmodels.catch_up()  # the read models are behind the log from here on: the use case catches them up
    [late] = schedule_runs(record, [ScheduleRun.on_course(station="s01", model="late", week=WEEK, requested_by="t")])
    issue_correction(record, readmodels, NoteOnModelWeek(model="late", week=WEEK, **STAFF))
    issue_correction(record, readmodels, NoteOnStationWeek(station="s01", week=WEEK, **STAFF))
    into_week(record, NEXT)
    record.start_run(late, worker="w", browser_version="b", agent_version="a")
    with pytest.raises(CorrectionError, match=f"model late has no run in {WEEK}"):
        issue_correction(record, readmodels, LeaveModelOut(model="late", week=WEEK, **STAFF))
    with pytest.raises(CorrectionError, match=f"station s01 has no run in {WEEK}"):
        issue_correction(record, readmodels, LeaveStationOut(station="s01", week=WEEK, **STAFF))
    issue_correction(record, readmodels, LeaveModelOut(model="late", week=NEXT, **STAFF))
    issue_correction(record, readmodels, NoteOnStationWeek(station="s01", week=NEXT, **STAFF))  # never left out


def test_an_outcome_is_set_only_on_a_finished_run_and_the_control_store_is_never_left_out(record, readmodels):
    """A cut-short run is not a result: a set_outcome on it was listed in force and changed no number. Leaving S01
    out changed nothing either (the ranking still asked every model to pass it) while the pages said it did not
    count. Both are refused, nothing recorded; voiding or noting them is still taken."""
    write_week(record, {"a": 17})
    [cut, waiting] = schedule_runs(record, [ScheduleRun.on_course(station=s, model="b", week=WEEK, requested_by="t")
                                            for s in ("s05", "s06")])
    record.start_run(cut, worker="w", browser_version="b", agent_version="a")
    record.cut_short_run(cut, "our_error", "the browser crashed", steps=1, seconds=2.0)
    for run_id, why in ((cut, "was cut short, so it is not a result"), (waiting, "has not finished")):
        head = record.head_position()
        with pytest.raises(CorrectionError, match=f"^run {run_id} {why}"):
            issue_correction(record, readmodels, SetRunOutcome(run_id=run_id, outcome="passed", **STAFF))
        assert record.head_position() == head
    head = record.head_position()
    with pytest.raises(CorrectionError, match="^station s01 is the control store and is never left out"):
        issue_correction(record, readmodels, LeaveStationOut(station="s01", week=WEEK, **STAFF))
    assert record.head_position() == head
    issue_correction(record, readmodels, VoidRun(run_id=cut, **STAFF))
    issue_correction(record, readmodels, NoteOnStationWeek(station="s01", week=WEEK, **STAFF))
    assert record.head_position() == head + 2
