"""Repeat runs: passes out of k, agreement, pass^k, Wilson intervals, paired tests and rank bands."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from fractions import Fraction
from pathlib import Path

import jsonschema
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_builders import COURSE, MONDAY, OBSTACLES, WEEK, correction, run, week_facts

from domain.projections.documents import week_documents
from domain.projections.facts import RunFact
from domain.projections.repeat_runs import (
    cell_pass_hat_k,
    model_pass_hat_k,
    repeat_cells,
    station_outcome,
    week_repeats,
)
from domain.projections.repeats import repeats_bytes
from domain.projections.statistics import pass_hat_k, wilson

SCHEMA = json.loads((Path(__file__).parents[3] / "docs" / "schemas" / "repeats.json").read_text())


def repeat(r: RunFact, index: int) -> RunFact:
    return msgspec.structs.replace(r, repeat=index)


def repeated_week(model: str, outcomes: dict[str, list[bool]], default: list[bool]) -> list[RunFact]:
    """s01 and every obstacle station, one run per repeat; `outcomes` overrides the default per station."""
    return [
        repeat(run(model, station, passed), i)
        for station in COURSE.codes
        for i, passed in enumerate(outcomes.get(station, default))
    ]


def passing_first(model: str, passes: int, k: int = 3) -> list[RunFact]:
    """k repeats everywhere; all pass at s01 and the first `passes` obstacle stations, all fail elsewhere."""
    return repeated_week(
        model, {s: [i < passes] * k for i, s in enumerate(OBSTACLES)}, [True] * k
    )


def document(runs: list[RunFact], corrections=None) -> dict:
    data = repeats_bytes(week_facts(runs, corrections))
    found = json.loads(data)
    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(found)
    return found


def model_entry(doc: dict, model: str) -> dict:
    return next(m for m in doc["models"] if m["model"] == model)


# --- hand-worked cases ---------------------------------------------------------------------------------------

def test_a_cell_counts_passes_out_of_k_and_how_often_the_repeats_agree():
    runs = repeated_week("a", {"s02": [True, False, True]}, [True, True, True])
    cell = model_entry(document(runs), "a")["cells"]["s02"]
    assert (cell["passed"], cell["runs"], cell["outcomes"]) == (2, 3, [True, False, True])
    assert cell["repeats"] == [0, 1, 2] and cell["agreement"] == "0.6667" and cell["outcome"] is True


def test_a_tied_cell_takes_the_outcome_of_the_newest_result():
    later = MONDAY + timedelta(hours=1)
    older_pass = repeat(run("a", "s02", True), 0)
    newer_fail = repeat(run("a", "s02", False, at=later), 1)
    assert station_outcome([older_pass, newer_fail]) is False
    assert station_outcome([repeat(run("a", "s02", True, at=later), 0), repeat(run("a", "s02", False), 1)])
    assert station_outcome([]) is None


def test_a_cut_short_repeat_is_no_result_and_its_new_attempt_counts_once():
    cut = repeat(run("a", "s02", status="cut_short"), 1)
    again = msgspec.structs.replace(repeat(run("a", "s02", False), 1), attempt=2)
    runs = repeated_week("a", {"s02": [True]}, [True, True]) + [cut, again]
    cell = model_entry(document(runs), "a")["cells"]["s02"]
    assert (cell["passed"], cell["runs"], cell["run_ids"][1]) == (1, 2, again.run_id)
    assert cut.run_id not in cell["run_ids"]


def test_a_voided_run_leaves_the_repeats_and_a_set_outcome_changes_one():
    runs = repeated_week("a", {}, [True, True, True])
    s02 = [r for r in runs if r.station == "s02"]
    corrections = [
        correction("run", "void", run_id=s02[0].run_id),
        correction("run", "set_outcome", run_id=s02[1].run_id, passed=False, outcome="stopped"),
    ]
    cell = model_entry(document(runs, corrections), "a")["cells"]["s02"]
    assert cell["run_ids"] == [s02[1].run_id, s02[2].run_id]
    assert cell["outcomes"] == [False, True]


def test_private_runs_never_appear():
    runs = passing_first("a", 17)
    private = [msgspec.structs.replace(r, org="acme", run_id=f"private-{i}") for i, r in enumerate(runs)]
    public = repeats_bytes(week_facts(runs))
    assert repeats_bytes(week_facts(runs + private)) == public
    assert b"private-" not in repeats_bytes(week_facts(runs + private))
    assert document(private)["models"] == []


def test_pass_hat_k_is_the_mean_over_stations_of_drawing_k_repeats_that_all_pass():
    cells = repeat_cells(
        [repeat(run("a", "s02", True), i) for i in range(3)]
        + [repeat(run("a", "s03", p), i) for i, p in enumerate([True, True, False])]
    )
    # s02: 3 of 3 passes 1, 1, 1; s03: 2 of 3 gives 2/3, C(2,2)/C(3,2) = 1/3, 0
    assert model_pass_hat_k(list(cells.values())) == [Fraction(5, 6), Fraction(2, 3), Fraction(1, 2)]
    assert cell_pass_hat_k(2, 3, 2) == Fraction(1, 3) and float(cell_pass_hat_k(2, 3, 2)) == pass_hat_k(2, 3, 2)


def test_the_share_over_every_repeat_has_a_wilson_interval():
    runs = repeated_week("a", {"s02": [True, False, False], "s03": [False, False, False]}, [True, True, True])
    entry = model_entry(document(runs), "a")
    assert (entry["passed"], entry["runs"], entry["share"]) == (46, 51, "0.9020")
    interval = wilson(46, 51)
    assert entry["interval"] == {"low": f"{interval.low:.4f}", "high": f"{interval.high:.4f}"}
    assert [p["k"] for p in entry["pass_hat_k"]] == [1, 2, 3]


def test_mcnemar_compares_station_outcomes_of_two_models():
    doc = document(passing_first("a", 17) + passing_first("b", 10) + passing_first("c", 14))
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert pairs[("a", "b")] == {"a": "a", "b": "b", "stations": 17, "only_a": 7, "only_b": 0,
                                 "p_value": "0.015625", "tied": False}  # 2 x (1/2)^7
    assert (pairs[("a", "c")]["p_value"], pairs[("a", "c")]["tied"]) == ("0.250000", True)  # 2 x (1/2)^3
    assert (pairs[("b", "c")]["p_value"], pairs[("b", "c")]["tied"]) == ("0.125000", True)  # 2 x (1/2)^4


def test_models_whose_difference_could_be_chance_share_a_band():
    doc = document(passing_first("a", 17) + passing_first("b", 10) + passing_first("c", 14))
    bands = {m["model"]: (m["place"], m["band"], m["tied_with"]) for m in doc["models"]}
    assert bands == {
        "a": (1, {"best": 1, "worst": 2}, ["c"]),
        "c": (2, {"best": 1, "worst": 3}, ["a", "b"]),
        "b": (3, {"best": 2, "worst": 3}, ["c"]),
    }


def test_unranked_and_excluded_models_get_no_band_and_excluded_ones_no_pair():
    runs = passing_first("a", 17) + passing_first("b", 12) + [repeat(run("c", "s02", True), 0)]
    doc = document(runs, [correction("model_week", "exclude", model="b")])
    by_model = {m["model"]: m for m in doc["models"]}
    assert by_model["a"]["band"] == {"best": 1, "worst": 1}
    assert by_model["b"]["band"] is None and by_model["b"]["excluded_text"]
    assert by_model["c"]["band"] is None and by_model["c"]["ranked"] is False
    assert [(p["a"], p["b"], p["stations"]) for p in doc["pairs"]] == [("a", "c", 1)]


def test_an_excluded_station_is_shown_but_not_counted():
    runs = repeated_week("a", {"s07": [False, False, False]}, [True, True, True])
    doc = document(runs, [correction("station_week", "exclude", station="s07")])
    entry = model_entry(doc, "a")
    assert "s07" not in doc["stations"] and entry["cells"]["s07"]["counts"] is False
    assert (entry["passed"], entry["runs"]) == (48, 48)


def test_the_official_ranking_keeps_the_newest_run_of_the_week():
    later = MONDAY + timedelta(hours=1)
    runs = passing_first("a", 17)
    runs = [r for r in runs if r.station != "s02"] + [
        repeat(run("a", "s02", True), 0), repeat(run("a", "s02", True), 1), repeat(run("a", "s02", False, at=later), 2)
    ]
    facts = week_facts(runs)
    ranking = json.loads(week_documents(facts).ranking)
    assert ranking["entries"][0]["passed"] == 16
    cell = model_entry(document(runs), "a")["cells"]["s02"]
    assert (cell["passed"], cell["outcome"]) == (2, True)


# --- properties ----------------------------------------------------------------------------------------------

cells_strategy = st.dictionaries(
    st.sampled_from(["a", "b", "c"]),
    st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=18, max_size=18),
    min_size=1,
)


def _runs(spec: dict[str, list[list[bool]]]) -> list[RunFact]:
    return [
        repeat(run(model, station, passed), i)
        for model, per_station in spec.items()
        for station, outcomes in zip(COURSE.codes, per_station, strict=True)
        for i, passed in enumerate(outcomes)
    ]


@settings(max_examples=25, deadline=None)
@given(cells_strategy, st.randoms(use_true_random=False))
def test_the_document_is_a_pure_function_of_the_results(spec, rnd: random.Random):
    runs = _runs(spec)
    noise = [
        msgspec.structs.replace(r, run_id=f"{r.run_id}-x", org="acme") for r in runs[:5]
    ] + [msgspec.structs.replace(r, run_id=f"{r.run_id}-y", status="cut_short", verdict=None) for r in runs[:5]]
    first = repeats_bytes(week_facts(runs))
    mixed = runs + noise
    rnd.shuffle(mixed)
    assert repeats_bytes(msgspec.structs.replace(week_facts(runs), runs=mixed)) == first


@settings(max_examples=25, deadline=None)
@given(cells_strategy)
def test_every_repeat_is_counted_and_the_statistics_stay_in_range(spec):
    doc = document(_runs(spec))
    models = {m["model"]: m for m in doc["models"]}
    assert sorted(models) == sorted(spec)
    for name, per_station in spec.items():
        entry = models[name]
        for code, outcomes in zip(COURSE.codes, per_station, strict=True):
            cell = entry["cells"][code]
            assert cell["outcomes"] == outcomes and cell["passed"] == sum(outcomes)
            assert Fraction(cell["agreement"]) >= Fraction(1, 2)
            if len(outcomes) % 2:
                assert cell["outcome"] == (2 * sum(outcomes) > len(outcomes))
        counted = [o for code, o in zip(COURSE.codes, per_station, strict=True) if code in doc["stations"]]
        assert entry["runs"] == sum(map(len, counted)) and entry["passed"] == sum(map(sum, counted))
        share = Fraction(entry["passed"], entry["runs"])
        low, high = Fraction(entry["interval"]["low"]), Fraction(entry["interval"]["high"])
        assert low - Fraction(1, 10_000) <= share <= high + Fraction(1, 10_000)
        values = [Fraction(p["value"]) for p in entry["pass_hat_k"]]
        assert values == sorted(values, reverse=True) and len(values) == min(map(len, counted))
    assert len(doc["pairs"]) == len(spec) * (len(spec) - 1) // 2
    assert all(p["p_value"] == "1.000000" for p in doc["pairs"] if p["only_a"] + p["only_b"] == 0)
    assert all(p["tied"] == (Fraction(p["p_value"]) >= Fraction(1, 20)) for p in doc["pairs"])


@settings(max_examples=25, deadline=None)
@given(cells_strategy)
def test_bands_contain_the_models_ranked_by_their_station_outcomes(spec):
    repeats = week_repeats(WEEK, _runs(spec), [], COURSE)
    ranked = [m for m in repeats.models if m.band is not None]
    for m in ranked:
        best, worst = m.band  # type: ignore[misc]
        assert 1 <= best <= worst <= len(ranked)
        for other in m.tied_with:
            assert m.model in next(o.tied_with for o in ranked if o.model == other)
