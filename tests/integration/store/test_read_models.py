"""The record and its read models on SQLite and PostgreSQL: projection, publication, audit, bad input."""

from __future__ import annotations

import json
import sqlite3
from uuid import uuid4

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError
from record_builders import WEEK, StepClock, into_week, write_week

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.eventlog.commands import LeaveModelOut, PublishWeek, ScheduleRun, SetRunOutcome, VoidRun
from domain.eventlog.handlers import issue_correction, schedule_runs
from domain.eventlog.record import UndecodableEventError, UnknownRunError
from domain.week.publications import PublicationError
from domain.week.publishing import NotPublishedError, RunsStillOpenError, UnknownWeekError, publish_week
from domain.week.weeks import week_start


def snapshot(rm: ReadModels) -> tuple:
    weeks = [w.week for w in rm.weeks()]
    return (weeks, [rm.ranking_bytes(w) for w in weeks], [rm.matrix_bytes(w) for w in weeks],
            [rm.repeats_bytes(w) for w in weeks], rm.corrections(), rm.runs_index(),
            rm.position())


def test_incremental_catch_up_equals_a_full_rebuild(record, readmodels):
    runs = write_week(record, {"a": 17, "b": 9})
    readmodels.catch_up()
    write_week(record, {"a": 3}, week="2026-W49")
    issue_correction(record, readmodels, VoidRun(run_id=runs[4].id, reason="judge bug",
                                                 public_text="A run was judged wrongly.", by="staff"))
    readmodels.catch_up()
    incremental = snapshot(readmodels)
    assert readmodels.rebuild() == record.head_position()
    assert snapshot(readmodels) == incremental
    ranking = json.loads(readmodels.ranking_bytes(WEEK))
    assert [(e["model"], e["ranked"]) for e in ranking["entries"]] == [("b", True), ("a", False)]


def test_catch_up_a_page_at_a_time_equals_a_rebuild(settings, record):
    write_week(record, {"a": 2})
    paged = ReadModels(settings, record, page_size=7, pages_per_transaction=1)
    paged.catch_up()  # empty read models: loaded at once
    runs = write_week(record, {"a": 17, "b": 4}, repeat=1) + write_week(record, {"a": 12}, week="2026-W49")
    issue_correction(record, paged, SetRunOutcome(run_id=runs[3].id, outcome="stopped", reason="judge bug",
                                                  public_text="Judged wrongly.", by="staff"))
    progress: list[int] = []
    assert paged.catch_up(lambda position, head: progress.append(position)) == record.head_position()
    assert len(progress) > 10 and progress == sorted(progress)
    incremental = snapshot(paged)
    paged.rebuild()
    assert snapshot(paged) == incremental


def test_repeats_sit_beside_the_newest_run_ranking_and_leave_out_private_and_voided_runs(record, readmodels):
    first = write_week(record, {"a": 17, "b": 17})
    second = write_week(record, {"a": 17, "b": 9}, repeat=1)
    third = write_week(record, {"a": 17, "b": 9}, repeat=2)
    write_week(record, {"a": 0}, repeat=3, org="acme")
    issue_correction(record, readmodels, VoidRun(run_id=third[5].id, reason="lab outage",
                                                 public_text="A run met a broken lab.", by="staff"))
    readmodels.catch_up()
    ranking = json.loads(readmodels.ranking_bytes(WEEK))
    assert [(e["model"], e["passed"]) for e in ranking["entries"]] == [("a", 17), ("b", 9)]
    repeats = json.loads(readmodels.repeats_bytes(WEEK))
    a, b = repeats["models"]
    assert (a["model"], a["runs"], a["passed"], a["band"]) == ("a", 50, 50, {"best": 1, "worst": 1})
    assert (b["runs"], b["passed"], b["cells"]["s12"]["outcomes"]) == (51, 35, [True, False, False])
    assert a["cells"]["s06"]["run_ids"] == [str(first[5].id), str(second[5].id)]
    assert repeats["pairs"] == [{"a": "a", "b": "b", "stations": 17, "only_a": 8, "only_b": 0,
                                 "p_value": "0.007813", "tied": False}]
    assert b"acme" not in readmodels.repeats_bytes(WEEK)
    with pytest.raises(UnknownWeekError):
        readmodels.repeats_bytes("2026-W40")


def test_publish_then_as_published_stays_while_as_corrected_changes(record, readmodels):
    runs = write_week(record, {"a": 17, "b": 17})
    into_week(record, "2026-W49")  # the week is over: its publications are final
    first = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
    issue_correction(record, readmodels, LeaveModelOut(model="a", week=WEEK, reason="leak",
                                                       public_text="a saw the course.", by="staff"))
    readmodels.catch_up()
    published = readmodels.ranking_bytes(WEEK, as_published=True)
    assert published != readmodels.ranking_bytes(WEEK)
    second = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
    assert second.position > first.position
    assert readmodels.ranking_bytes(WEEK, as_published=True) == published
    with readmodels.db.transaction() as tx:  # lose the stored bytes: replaying the log gives them again
        tx.execute("DELETE FROM rm_published_documents")
    assert readmodels.ranking_bytes(WEEK, as_published=True) == published
    with pytest.raises(PublicationError):
        publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
    assert runs


def test_a_provisional_publication_is_verifiable_and_the_weeks_close_supersedes_it(record, readmodels):
    write_week(record, {"a": 17, "b": 9})
    # the clock is still in the week
    provisional = publish_week(record, readmodels, PublishWeek(week=WEEK, by="scheduler"))
    assert provisional.provisional
    provisional_bytes = readmodels.ranking_bytes(WEEK, as_published=True)
    assert [w.provisional for w in readmodels.weeks()] == [True]
    write_week(record, {"c": 17})  # later the same week: more runs count
    with readmodels.db.transaction() as tx:  # a provisional publication replays from the log like any other
        tx.execute("DELETE FROM rm_published_documents")
    assert readmodels.published_documents(WEEK, 0).ranking == provisional_bytes
    into_week(record, "2026-W49")
    final = publish_week(record, readmodels, PublishWeek(week=WEEK, by="scheduler"))
    assert not final.provisional and final.position > provisional.position
    assert readmodels.ranking_bytes(WEEK, as_published=True) == readmodels.ranking_bytes(WEEK) != provisional_bytes
    assert [w.provisional for w in readmodels.weeks()] == [False]
    write_week(record, {"d": 17}, week="2026-W49")
    with pytest.raises(PublicationError, match="changes only through corrections"):
        record.week_record(WEEK).publish(position=record.head_position(), ranking_sha256="x", matrix_sha256="y",
                                         course_version="2.1", by="x", at=week_start(WEEK))


def test_a_week_that_is_over_is_not_published_while_a_run_started_in_it_still_runs(record, readmodels):
    write_week(record, {"a": 17})
    late = Run.schedule(station="s02", model="b", course_version="2.1", week=WEEK, kind="browser",
                        requested_by="test", at=record.clock())
    late.start(worker="w", browser_version="b", agent_version="a", at=record.clock())  # Sunday night, in the week
    record.save(late)
    into_week(record, "2026-W49")
    with pytest.raises(RunsStillOpenError, match="1 run"):
        publish_week(record, readmodels, PublishWeek(week=WEEK, by="scheduler"))
    record.finish_run(late.id, Verdict(passed=True, outcome="passed"), steps=1, seconds=1.0)
    assert not publish_week(record, readmodels, PublishWeek(week=WEEK, by="scheduler")).provisional


def test_unknown_week_and_run_are_clear_errors(record, readmodels):
    write_week(record, {"a": 1})
    readmodels.catch_up()
    with pytest.raises(UnknownWeekError, match="2026-W40"):
        readmodels.ranking_bytes("2026-W40")
    with pytest.raises(NotPublishedError):
        readmodels.ranking_bytes(WEEK, as_published=True)
    with pytest.raises(UnknownWeekError):
        publish_week(record, readmodels, PublishWeek(week="2026-W40", by="lead"))
    with pytest.raises(UnknownRunError):
        record.get_run(uuid4())
    with pytest.raises(UnknownRunError):
        readmodels.run(str(uuid4()))


def _insert_bad_event(settings) -> None:
    row = (str(uuid4()), 1, "domain.agent.runs:Run.Scheduled", b'{"station": 42')
    if settings.database_url:
        with psycopg.connect(settings.database_url) as conn:
            conn.execute("INSERT INTO canitbuy_events (originator_id, originator_version, topic, state) "
                         "VALUES (%s, %s, %s, %s)", row)
    else:
        with sqlite3.connect(settings.data_dir / "canitbuy.sqlite3") as conn:
            conn.execute("INSERT INTO stored_events VALUES (?, ?, ?, ?)", row)


def test_an_undecodable_event_stops_the_projection_at_its_position(settings, record, readmodels):
    write_week(record, {"a": 5})
    good = record.head_position()
    _insert_bad_event(settings)
    bad = record.head_position()
    write_week(record, {"b": 5})
    with pytest.raises(UndecodableEventError, match=f"position {bad}") as caught:
        readmodels.catch_up()
    assert caught.value.position == bad
    assert readmodels.position() == good
    with pytest.raises(UndecodableEventError):
        readmodels.rebuild()
    assert readmodels.position() == good


def test_two_writers_on_one_run_one_wins_and_nothing_is_lost(settings, record):
    [run_id] = schedule_runs(record, [ScheduleRun.on_course(station="s02", model="a", week=WEEK, requested_by="test")])
    other = open_record(settings, clock=StepClock())
    try:
        mine, theirs = record.get_run(run_id), other.get_run(run_id)
        mine.start(worker="one", browser_version="b", agent_version="a", at=record.clock())
        theirs.start(worker="two", browser_version="b", agent_version="a", at=other.clock())
        record.save(mine)
        with pytest.raises(IntegrityError):
            other.save(theirs)
    finally:
        other.close()
    run = record.get_run(run_id)
    assert run.status == "running" and run.version == 2
    record.finish_run(run_id, Verdict(passed=True, outcome="passed"), steps=1, seconds=1.0)
    assert record.get_run(run_id).status == "finished"


def test_a_run_scheduled_for_one_week_and_started_in_the_next_replays_as_published(record, readmodels):
    write_week(record, {"a": 17, "b": 3})
    late = Run.schedule(station="s05", model="b", course_version="2.1", week=WEEK, kind="browser",
                        requested_by="test", at=record.clock())
    record.save(late)
    readmodels.catch_up()  # the read models know it under the week it was scheduled for, before it starts
    into_week(record, "2026-W49")
    late.start(worker="w", browser_version="b", agent_version="a", at=record.clock())
    late.finish(Verdict(passed=True, outcome="passed", stage="checkout", step=4), steps=4, seconds=9.0,
                at=record.clock())
    record.save(late)
    write_week(record, {"a": 17, "b": 3}, week="2026-W49")
    for week in (WEEK, "2026-W49"):
        publish_week(record, readmodels, PublishWeek(week=week, by="lead"))
        replayed = readmodels.published_documents(week)  # recomputed from the log, checked against the hashes
        assert replayed.ranking == readmodels.week_documents(week).ranking
    readmodels.rebuild()
    for week in (WEEK, "2026-W49"):
        assert readmodels.week_documents(week).ranking == readmodels.published_documents(week).ranking


def test_runs_labelled_for_later_weeks_but_all_started_in_one_count_where_they_started(record, readmodels):
    """A year of history written at once, every run started in the first week whatever week it was scheduled for
    (a worker that was down): each publication still replays to its bytes."""
    write_week(record, {"a": 17, "b": 3})
    moved = []
    for week in ("2026-W49", "2026-W50"):
        run = Run.schedule(station="s05", model="b", course_version="2.1", week=week, kind="browser",
                           requested_by="test", at=record.clock())
        run.start(worker="w", browser_version="b", agent_version="a", at=record.clock())
        run.finish(Verdict(passed=True, outcome="passed", stage="checkout", step=4), steps=4, seconds=9.0,
                   at=record.clock())
        moved.append(run)
    record.save(*moved)
    into_week(record, "2026-W51")
    publication = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
    assert readmodels.published_documents(WEEK).position == publication.position
    for empty in ("2026-W49", "2026-W50"):  # nothing started there: their documents replay all the same
        publish_week(record, readmodels, PublishWeek(week=empty, by="lead"))
        assert readmodels.published_documents(empty).ranking == readmodels.week_documents(empty).ranking
