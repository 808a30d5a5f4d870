"""Documents format 4: the newest run of the week is the one that started last, and the results cut-off applies to
the start. Formats 1 to 3 keep counting by the end, so their publications replay (method of course 2.1: "For each
store and model we take the newest run of the ISO week"; "Agent results from before 22 October 2026, 09:00 UTC are
left out")."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scoring_builders import COURSE, MONDAY, WEEK, full_week, run, week_facts

from domain.projections.documents import (
    DOCUMENTS_FORMAT,
    MATRIX_FORMAT,
    RANKING_FORMAT,
    UnknownFormatError,
    counting_rule,
    week_documents,
)
from domain.projections.facts import RunFact
from domain.projections.repeat_runs import repeat_cells, station_outcome, week_repeats
from domain.projections.repeats import repeats_bytes
from domain.projections.scoring import (
    COUNT_BY_END,
    COUNT_BY_START,
    began_at,
    is_result,
    newest,
    newest_results,
    score_week,
)
from domain.week.weeks import RESULTS_CUTOFF

NOON = MONDAY.replace(hour=12)
EDGE_WEEK = "2026-W43"
"""The week of 22 October 2026, the cut-off's day."""


def repeats_side_by_side() -> list[RunFact]:
    """Three repeats of a at s05 scheduled next to each other: r0 and r1 start at T and T+1s and fail at the
    150-second limit; r2 starts at T+2s and passes in 30 s, so it ends first (the log holds r2's end first)."""
    r2 = run("a", "s05", True, started=NOON + timedelta(seconds=2), at=NOON + timedelta(seconds=32), position=500,
             repeat=2)
    r0 = run("a", "s05", False, started=NOON, at=NOON + timedelta(seconds=150), position=501, outcome="time_limit")
    r1 = run("a", "s05", False, started=NOON + timedelta(seconds=1), at=NOON + timedelta(seconds=151), position=502,
             outcome="time_limit", repeat=1)
    return [r0, r1, r2]


def week_of_a(s05: list[RunFact]) -> list[RunFact]:
    return [r for r in full_week("a", 17) if r.station != "s05"] + s05


def test_of_repeats_started_side_by_side_the_one_started_last_counts_not_the_slow_failure():
    r0, r1, r2 = repeats_side_by_side()
    assert newest_results([r0, r1, r2], COUNT_BY_START)[("a", "s05")] is r2
    assert newest_results([r0, r1, r2], COUNT_BY_END)[("a", "s05")] is r1  # formats 1 to 3, as published
    now = score_week(WEEK, week_of_a([r0, r1, r2]), [], COURSE)
    assert now.results[("a", "s05")] is r2 and now.entries[0].passed == 17 and now.count_by == COUNT_BY_START
    then = score_week(WEEK, week_of_a([r0, r1, r2]), [], COURSE, COUNT_BY_END)
    assert then.results[("a", "s05")] is r1 and then.entries[0].passed == 16


def test_the_documents_count_as_their_format_says():
    r0, r1, r2 = repeats_side_by_side()
    facts = week_facts(week_of_a([r0, r1, r2]))
    four, three = week_documents(facts, 4), week_documents(facts, 3)
    assert week_documents(facts).documents_format == DOCUMENTS_FORMAT == 5  # format 5 counts by the start too
    ranking, matrix = json.loads(four.ranking), json.loads(four.matrix)
    assert (ranking["format"], matrix["format"]) == (RANKING_FORMAT, "canitbuy-matrix/4") and MATRIX_FORMAT == (
        "canitbuy-matrix/5")
    assert ranking["entries"][0]["passed"] == 17
    assert matrix["models"][0]["cells"]["s05"]["run_id"] == r2.run_id
    ranking, matrix = json.loads(three.ranking), json.loads(three.matrix)
    assert (ranking["format"], matrix["format"]) == ("canitbuy-ranking/2", "canitbuy-matrix/3")
    assert ranking["entries"][0]["passed"] == 16
    assert matrix["models"][0]["cells"]["s05"] == {**matrix["models"][0]["cells"]["s05"], "run_id": r1.run_id,
                                                  "status": "stopped", "outcome": "time_limit"}
    for old in (1, 2):  # built from format 3: they count by the end too
        assert json.loads(week_documents(facts, old).ranking)["entries"][0]["passed"] == 16


def test_an_unknown_format_is_refused():
    facts = week_facts(full_week("a", 17))
    for unknown in (0, DOCUMENTS_FORMAT + 1):
        with pytest.raises(UnknownFormatError):
            week_documents(facts, unknown)
    assert [counting_rule(f) for f in (1, 2, 3, 4, 5)] == [COUNT_BY_END] * 3 + [COUNT_BY_START] * 2


def test_the_repeats_take_the_newest_result_of_each_index_and_break_a_tie_by_the_newest_start():
    # two repeats: r0 starts first and fails at the limit after r1, started a second later, passed
    r0 = run("a", "s05", False, started=NOON, at=NOON + timedelta(seconds=150), position=601)
    r1 = run("a", "s05", True, started=NOON + timedelta(seconds=1), at=NOON + timedelta(seconds=31), position=600,
             repeat=1)
    assert station_outcome([r0, r1]) is True  # the tie goes to r1, the newest by its start
    assert station_outcome([r0, r1], COUNT_BY_END) is False
    # repeat index 0 run twice: the newest result of the index is the one kept
    again = run("a", "s05", False, started=NOON - timedelta(minutes=10), at=NOON + timedelta(minutes=5),
                position=602)
    cell = repeat_cells([r0, r1, again])[("a", "s05")]
    assert [r.run_id for r in cell.results] == [r0.run_id, r1.run_id] and cell.outcome is True
    cell = repeat_cells([r0, r1, again], COUNT_BY_END)[("a", "s05")]
    assert [r.run_id for r in cell.results] == [again.run_id, r1.run_id] and cell.outcome is False


def test_the_repeats_document_counts_as_the_current_format():
    runs = week_of_a(repeats_side_by_side())
    repeats = week_repeats(WEEK, runs, [], COURSE)
    assert repeats.score.count_by == COUNT_BY_START and repeats.score.entries[0].passed == 17
    document = json.loads(repeats_bytes(week_facts(runs)))
    assert document["format"] == "canitbuy-repeats/2"
    cell = next(m for m in document["models"] if m["model"] == "a")["cells"]["s05"]
    assert (cell["outcomes"], cell["repeats"], cell["outcome"]) == ([False, False, True], [0, 1, 2], False)


def test_the_last_run_of_a_cell_without_a_result_is_the_one_started_last():
    # two repeats cut short: r0 started first and lost the model late; r1 started after it and hit our error early
    r0 = msgspec.structs.replace(run("b", "s09", status="cut_short", started=NOON, at=NOON + timedelta(seconds=150),
                                     position=701), cut_short_cause="model_connection")
    r1 = msgspec.structs.replace(run("b", "s09", status="cut_short", started=NOON + timedelta(seconds=1),
                                     at=NOON + timedelta(seconds=11), position=700, repeat=1),
                                 cut_short_cause="our_error")
    facts = week_facts([r for r in full_week("b", 17) if r.station != "s09"] + [r0, r1])
    for documents_format, last in ((4, r1), (3, r0)):
        docs = week_documents(facts, documents_format)
        entry = json.loads(docs.ranking)["entries"][0]
        cell = json.loads(docs.matrix)["models"][0]["cells"]["s09"]
        assert entry["no_result"] == {"s09": last.cut_short_cause}
        assert (cell["status"], cell["run_id"], cell["cause"]) == ("cut_short", last.run_id, last.cut_short_cause)


# --- the cut-off: 22 October 2026, 09:00 UTC --------------------------------------------------------------------

def at_the_edge(started: datetime | None, ended: datetime, scheduled: datetime | None = None) -> RunFact:
    fact = run("a", "s01", True, started=started, at=ended, week=EDGE_WEEK)
    fact = msgspec.structs.replace(fact, started_at=started, scheduled_at=scheduled or RESULTS_CUTOFF - timedelta(
        minutes=5))
    return fact


def test_a_run_started_before_the_cutoff_is_no_result_though_it_ended_after():
    late = at_the_edge(RESULTS_CUTOFF - timedelta(seconds=1), RESULTS_CUTOFF + timedelta(seconds=30))
    assert not is_result(late)
    assert is_result(late, COUNT_BY_END)  # formats 1 to 3: a result, as published
    sharp = at_the_edge(RESULTS_CUTOFF, RESULTS_CUTOFF + timedelta(seconds=20))
    assert is_result(sharp) and is_result(sharp, COUNT_BY_END)
    facts = msgspec.structs.replace(week_facts([late]), week=EDGE_WEEK)
    assert json.loads(week_documents(facts).ranking)["entries"][0]["reasons"] == [
        "no_control_result", "stations_missing"]
    assert json.loads(week_documents(facts, 3).ranking)["entries"][0]["reasons"] == ["stations_missing"]
    cell = json.loads(week_documents(facts).matrix)["models"][0]["cells"]["s01"]
    assert (cell["status"], cell["run_id"]) == ("not_run", late.run_id)  # tried, but no result


def test_a_finished_run_with_no_start_recorded_counts_from_its_scheduling():
    before = at_the_edge(None, RESULTS_CUTOFF + timedelta(minutes=1), RESULTS_CUTOFF - timedelta(microseconds=1))
    after = at_the_edge(None, RESULTS_CUTOFF + timedelta(minutes=1), RESULTS_CUTOFF)
    assert began_at(before) == before.scheduled_at and not is_result(before)
    assert is_result(after)
    started_later = at_the_edge(RESULTS_CUTOFF + timedelta(seconds=5), RESULTS_CUTOFF + timedelta(seconds=6))
    assert newest([after, started_later]) is started_later
    assert newest([after, started_later], COUNT_BY_END) is after


# --- properties -------------------------------------------------------------------------------------------------

@given(st.lists(st.tuples(st.integers(0, 600), st.integers(1, 150), st.booleans()), min_size=1, max_size=8,
                unique_by=lambda t: t[0]))
def test_the_newest_by_start_is_the_latest_start_and_by_end_the_latest_end(attempts):
    runs = [
        run("m", "s02", passed, started=NOON + timedelta(seconds=s), at=NOON + timedelta(seconds=s + d),
            position=1000 + i)
        for i, (s, d, passed) in enumerate(attempts)
    ]
    by_start = max(range(len(runs)), key=lambda i: (attempts[i][0], i))
    by_end = max(range(len(runs)), key=lambda i: (attempts[i][0] + attempts[i][1], i))
    assert newest_results(runs)[("m", "s02")] is runs[by_start]
    assert newest_results(runs, COUNT_BY_END)[("m", "s02")] is runs[by_end]


@given(st.lists(st.integers(1, 150), min_size=2, max_size=6))
def test_runs_started_at_the_same_instant_are_told_apart_by_the_log_position_of_their_end(durations):
    runs = [run("m", "s02", started=NOON, at=NOON + timedelta(seconds=d), position=2000 + i)
            for i, d in enumerate(durations)]
    assert newest(runs) is runs[-1]
