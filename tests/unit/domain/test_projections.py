"""The projections: pure folds of events into canonical documents that match their published schemas."""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_builders import (
    COURSE,
    OBSTACLES,
    WEEK,
    correction,
    envelope,
    full_week,
    release_event,
    run,
    run_events,
    week_facts,
)

from domain.agent.verdicts import Verdict
from domain.projections import logs
from domain.projections.canonical import CanonicalError, canonical_bytes
from domain.projections.documents import Matrix, Ranking, week_documents
from domain.projections.fold import LogState
from web.public.week_views import cell_view, ranking_rows

SCHEMAS = Path(__file__).parents[3] / "docs" / "schemas"


def validate(name: str, data: bytes) -> dict:
    document = json.loads(data)
    jsonschema.Draft202012Validator(json.loads((SCHEMAS / f"{name}.json").read_text()),
                                    format_checker=jsonschema.FormatChecker()).validate(document)
    return document


def typed(data: bytes, kind: type = Matrix):
    return msgspec.json.decode(data, type=kind)


def history(passes: dict[str, int]) -> list:
    events, position = [release_event()], 2
    for model, count in passes.items():
        for i, station in enumerate(COURSE.codes):
            events += run_events(position, model, station, station == "s01" or i <= count)
            position += 3
    return events


def fold(events) -> LogState:
    state = LogState()
    state.fold(events)
    return state


@settings(deadline=None)  # a shared machine's load is no failure of the rule
@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 17), min_size=1))
def test_the_same_events_give_the_same_bytes(passes):
    events = history(passes)
    first, second = week_documents(fold(events).week_facts(WEEK)), week_documents(fold(events).week_facts(WEEK))
    assert first == second
    facts = fold(events).week_facts(WEEK)
    shuffled = msgspec.structs.replace(facts, runs=random.sample(facts.runs, len(facts.runs)))
    assert week_documents(shuffled) == first


def test_the_ranking_and_matrix_validate_against_their_schemas():
    facts = week_facts(full_week("a", 17) + full_week("b", 12) + [run("c", "s01", False)],
                       [correction("station_week", "exclude", station="s07")])
    docs = week_documents(facts)
    ranking, matrix = validate("ranking", docs.ranking), validate("matrix", docs.matrix)
    assert ranking["license"] == "CC BY 4.0" and ranking["citation"].startswith(
        "CanItBuy AI agent ranking, canitbuy.com/ranking, 2026-W48, ")
    assert [(e["model"], e["place"], e["share"]) for e in ranking["entries"]] == [
        ("a", 1, "1.0000"), ("b", 2, "0.6875"), ("c", None, None)
    ]
    assert matrix["models"][2]["cells"]["s02"]["status"] == "not_run"


def test_matrix_cells_say_how_each_run_ended():
    runs = full_week("a", 17)
    runs += [run("a", "s13", False, outcome="verification_page", at=runs[-1].ended_at.replace(year=2027))]
    runs += [run("a", "s16", False, outcome="broke_brief", at=runs[-1].ended_at)]
    matrix = json.loads(week_documents(week_facts(runs)).matrix)
    cells = matrix["models"][0]["cells"]
    assert (cells["s13"]["status"], cells["s16"]["status"], cells["s02"]["status"]) == (
        "verification_page", "broke_brief", "passed"
    )
    assert cells["s02"]["run_id"] and cells["s02"]["stage"] == "entry" and cells["s02"]["step"] == 4


def test_a_correction_changes_the_ranking_and_shows_in_the_log():
    runs = full_week("a", 17)
    void = correction("run", "void", run_id=runs[5].run_id)
    before = json.loads(week_documents(week_facts(runs)).ranking)
    after = json.loads(week_documents(week_facts(runs, [void])).ranking)
    assert before["entries"][0]["ranked"] and not after["entries"][0]["ranked"]
    assert after["corrections"][0]["id"] == void.correction_id
    log = validate("corrections", logs.corrections_log([void], {r.run_id: r for r in runs}))
    assert log["corrections"][0]["before"] == {"counts": True, "passed": True, "outcome": "passed"}
    assert log["corrections"][0]["after"] == {"counts": False, "passed": None, "outcome": None}


def test_withdrawal_shows_in_the_log_and_undoes_the_correction():
    events = history({"a": 17})
    rid = events[1].originator_id
    cid = "00000000-0000-0000-0000-0000000000cc"
    events += [
        envelope(1000, "Correction.Issued", cid, target="run", change="void", reason="bug", public_text="void",
                 by="staff", run_id=rid),
        envelope(1001, "Correction.Withdrawn", cid, 2, reason="mistake", by="staff"),
    ]
    state = fold(events)
    assert json.loads(week_documents(state.week_facts(WEEK)).ranking)["entries"][0]["ranked"]
    log = json.loads(logs.corrections_log(state.corrections.values(), state.runs))
    assert log["corrections"][0]["withdrawn"]["reason"] == "mistake"


def test_the_run_index_is_public_only():
    state = fold(history({"a": 17, "b": 3}))
    private = run("a", "s02", org="acme")
    index = validate("runs", logs.runs_index([*state.runs.values(), private]))
    assert len(index["runs"]) == 36 and all(r["run_id"] != private.run_id for r in index["runs"])


def test_events_of_other_weeks_and_private_runs_touch_nothing_of_this_week():
    state = fold([release_event()])
    assert state.apply(run_events(10, "a", "s02", True, week="2026-W49")[0]) == frozenset({"2026-W49"})
    assert state.apply(run_events(20, "a", "s02", True)[1 - 1]) == frozenset({WEEK})
    assert state.apply(run_events(20, "a", "s02", True)[1]) == frozenset()


def test_floats_have_no_canonical_form():
    try:
        canonical_bytes({"share": 0.5})
    except CanonicalError:
        return
    raise AssertionError("a float was encoded")


def test_all_stations_are_obstacles_but_the_control():
    assert len(OBSTACLES) == 17 and COURSE.control.code == "s01"


def test_accepting_all_cookies_is_a_remark_in_the_cell_and_a_count_beside_the_score():
    # s02 is scored by reaching the checkout; the consent choice shows beside the result (issue #10, point 3).
    runs = full_week("a", 17) + full_week("b", 17)
    for i, r in enumerate(runs):
        if r.station == "s02":
            verdict = Verdict(passed=True, outcome="passed", stage="checkout", step=5, remarks=["consent_all"])
            runs[i] = msgspec.structs.replace(r, verdict=verdict if r.model == "a" else r.verdict)
    docs = week_documents(week_facts(runs))
    ranking, matrix = validate("ranking", docs.ranking), validate("matrix", docs.matrix)
    a, b = ranking["entries"]
    assert (a["model"], a["share"], a["place"], a["accepted_all_cookies"]) == ("a", "1.0000", 1, 1)
    assert (b["model"], b["share"], b["place"], b["accepted_all_cookies"]) == ("b", "1.0000", 1, 0)
    cell = matrix["models"][0]["cells"]["s02"]
    assert cell["status"] == "passed" and cell["remarks"] == ["consent_all"] and cell["broke"] == []
    assert matrix["models"][1]["cells"]["s02"]["remarks"] == []
    view = cell_view(typed(docs.matrix).models[0].cells["s02"], "entry", typed(docs.matrix).stage_names())
    assert view.words == "Passed" and view.remark == "accepted all cookies"


def test_an_unranked_model_without_an_s01_result_is_not_said_to_have_failed_s01():
    # "no result in S01 (cut short by our error)" is not "did not reach the checkout in S01" (issue #10, point 5).
    runs = full_week("a", 17)
    runs[0] = msgspec.structs.replace(runs[0], status="cut_short", verdict=None, cut_short_cause="our_error")
    s05 = next(i for i, r in enumerate(runs) if r.station == "s05")
    runs[s05] = msgspec.structs.replace(runs[s05], status="cut_short", verdict=None,
                                        cut_short_cause="model_connection")
    ranking = validate("ranking", week_documents(week_facts(runs)).ranking)
    entry = ranking["entries"][0]
    assert entry["reasons"] == ["no_control_result", "stations_missing"]
    assert entry["no_result"] == {"s01": "our_error", "s05": "model_connection"}
    _, unranked = ranking_rows(typed(week_documents(week_facts(runs)).ranking, Ranking))
    assert unranked[0].why == ["no result in S01 (cut short by our error)",
                                  "has no result from S05 (cut short: the model could not be reached)"]
    matrix = validate("matrix", week_documents(week_facts(runs)).matrix)
    cell = matrix["models"][0]["cells"]["s05"]
    assert (cell["status"], cell["cause"]) == ("cut_short", "model_connection")
    typed_matrix = typed(week_documents(week_facts(runs)).matrix)
    typed_cell = typed_matrix.models[0].cells["s05"]
    assert cell_view(typed_cell, "variant", typed_matrix.stage_names()).detail == (
        "cut short: the model could not be reached")


def test_a_failed_s01_still_reads_as_not_reaching_the_checkout():
    runs = full_week("a", 17)
    runs[0] = msgspec.structs.replace(runs[0], verdict=Verdict(passed=False, outcome="stopped", stage="cart", step=9))
    ranking = validate("ranking", week_documents(week_facts(runs)).ranking)
    assert ranking["entries"][0]["reasons"] == ["no_control_pass"] and ranking["entries"][0]["no_result"] == {}
    rows = ranking_rows(typed(week_documents(week_facts(runs)).ranking, Ranking))
    assert rows[1][0].why == ["did not reach the checkout in the control store S01"]
