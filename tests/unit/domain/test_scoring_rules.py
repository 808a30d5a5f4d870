"""How a result counts: the rules of COURSE.md as properties of score_week."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_builders import COURSE, MONDAY, OBSTACLES, WEEK, correction, full_week, run

from domain.projections.scoring import score_week
from domain.week.weeks import RESULTS_CUTOFF


def entry(runs, corrections=(), model="m"):
    score = score_week(WEEK, runs, list(corrections), COURSE)
    return next(e for e in score.entries if e.model == model)


@given(control_passed=st.booleans(), present=st.sets(st.sampled_from(OBSTACLES)))
def test_a_model_is_ranked_only_with_the_control_passed_and_all_17_stations(control_passed, present):
    runs = [run("m", "s01", control_passed)] + [run("m", s) for s in sorted(present)]
    e = entry(runs)
    assert e.ranked == (control_passed and len(present) == 17)
    assert e.missing == [s for s in OBSTACLES if s not in present]
    assert ("no_control_pass" in e.reasons) == (not control_passed)
    assert ("stations_missing" in e.reasons) == (len(present) < 17)


@settings(deadline=None)  # a shared machine's load is no failure of the rule
@given(st.lists(st.integers(min_value=0, max_value=17), min_size=1, max_size=6))
def test_equal_shares_share_a_place_with_no_tie_break(passes):
    runs = [r for i, p in enumerate(passes) for r in full_week(f"m{i}", p)]
    entries = score_week(WEEK, runs, [], COURSE).entries
    for e in entries:
        assert e.place == 1 + sum(1 for p in passes if p > e.passed)
        assert e.share is not None and e.share.denominator in (1, 17) or 17 % e.share.denominator == 0
    assert [e.place for e in entries] == sorted(e.place for e in entries)


def test_places_go_one_one_three():
    runs = full_week("a", 15) + full_week("b", 15) + full_week("c", 12)
    assert [(e.model, e.place) for e in score_week(WEEK, runs, [], COURSE).entries] == [
        ("a", 1), ("b", 1), ("c", 3)
    ]


@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 10_000), st.booleans()), min_size=1, max_size=8,
                unique_by=lambda t: (t[0], t[1])))
def test_the_newest_run_of_the_week_counts(attempts):
    runs = [run("m", "s02", passed, at=MONDAY + timedelta(minutes=m), position=p) for m, p, passed in attempts]
    newest = max(attempts, key=lambda t: (t[0], t[1]))
    result = score_week(WEEK, runs, [], COURSE).results[("m", "s02")]
    assert result.verdict is not None and result.verdict.passed == newest[2]


@settings(max_examples=50)
@given(st.integers(0, 17), st.sampled_from(OBSTACLES), st.integers(1, 30 * 24 * 60))
def test_cut_short_runs_and_results_before_the_cutoff_never_count(passes, station, minutes_before):
    runs = full_week("m", passes)
    before = score_week(WEEK, runs, [], COURSE).entries
    late = MONDAY + timedelta(days=1)
    noise = [
        run("m", station, False, status="cut_short", at=late),
        run("m", station, False, at=RESULTS_CUTOFF - timedelta(minutes=minutes_before)),
        run("m", station, False, org="acme-private", at=late),
    ]
    assert score_week(WEEK, runs + noise, [], COURSE).entries == before


def test_a_week_of_only_cut_short_runs_is_unranked_with_the_stations_missing():
    # No S01 result is not a failed S01: the reason says which (issue #10, point 5; was no_control_pass).
    runs = [run("m", s, status="cut_short") for s in COURSE.codes]
    e = entry(runs)
    assert not e.ranked and e.missing == OBSTACLES and e.reasons == ["no_control_result", "stations_missing"]
    failed = entry([run("m", "s01", False)] + [run("m", s) for s in OBSTACLES])
    assert failed.reasons == ["no_control_pass"]


def test_the_reading_station_is_scored_by_the_reader_run_only():
    runs = [r for r in full_week("m", 17) if r.station != "s12"] + [run("m", "s12", kind="browser")]
    assert entry(runs).missing == ["s12"]


def test_voiding_the_newest_run_lets_the_one_before_count():
    runs = full_week("m", 17)
    newer = run("m", "s05", False, at=MONDAY + timedelta(days=2))
    void = correction("run", "void", run_id=newer.run_id)
    assert entry(runs + [newer]).passed == 16
    assert entry(runs + [newer], [void]).passed == 17


def test_set_outcome_replaces_the_verdict_and_a_withdrawn_correction_does_nothing():
    runs = full_week("m", 10)
    failed = next(r for r in runs if r.station == OBSTACLES[12])
    fix = dict(run_id=failed.run_id, passed=True, outcome="passed")
    assert entry(runs, [correction("run", "set_outcome", **fix)]).passed == 11
    assert entry(runs, [correction("run", "set_outcome", withdrawn=True, **fix)]).passed == 10


def test_an_excluded_model_week_is_unranked_with_the_reason():
    e = entry(full_week("m", 17), [correction("model_week", "exclude", model="m")])
    assert not e.ranked and e.place is None and e.reasons == ["excluded"] and e.excluded_text


def test_an_excluded_station_is_left_out_for_everyone_that_week():
    runs = [r for r in full_week("m", 17) if r.station != "s13"] + full_week("n", 16)
    score = score_week(WEEK, runs, [correction("station_week", "exclude", station="s13")], COURSE)
    assert "s13" not in score.stations and all(e.ranked and e.of == 16 for e in score.entries)
    assert {e.model: e.passed for e in score.entries} == {"m": 16, "n": 15}  # n failed s18, passed s13


def test_a_note_changes_nothing_but_the_text():
    runs = full_week("m", 9)
    assert entry(runs, [correction("run", "note", run_id=runs[3].run_id)]) == entry(runs)


def test_corrections_of_another_week_do_nothing():
    runs = full_week("m", 17)
    assert entry(runs, [correction("model_week", "exclude", model="m", week="2026-W49")]).ranked
