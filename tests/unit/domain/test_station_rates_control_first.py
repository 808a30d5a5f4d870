"""A station's pass rate counts only the models that passed the control S01 that week and no correction excluded
(documents format 5), as the score does: "Your score is the share of the 17 obstacle stations passed, counted only
after the control store S01 was passed"; "The obstacle registry and the weekly CanItBuy Index use the same
control-first rule" (course spec 2.1, scoring); "A run on an obstacle store means something only when the same agent
... got through S01" (method 2.1). S01's own rate is every model's S01 result (less a model excluded from the week).
Weeks published in format 4 and earlier replay to the bytes they were published with, counting every result."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

import msgspec
from scoring_builders import MONDAY, OBSTACLES, correction, run, week_facts

from domain.projections.charts import station_chart, stops_chart, weeks_chart
from domain.projections.documents import DOCUMENTS_FORMAT, Matrix, Ranking, week_documents
from domain.projections.facts import RunFact, WeekFacts
from web.public.chart_svg import chart_svg, drawn_points


def _run(n: int, model: str, station: str, passed: bool) -> RunFact:
    """A run with an id, position and time of its own (not the builders' shared counter), so the bytes are fixed."""
    at = MONDAY + timedelta(seconds=n)
    return msgspec.structs.replace(run(model, station, passed, at=at), run_id=f"run-{model}-{station}", position=n,
                                   end_position=n)


def _week(*models: tuple[str, bool, set[str]]) -> list[RunFact]:
    """Each (model, s01 passed, obstacle stations it fails) at s01 and every obstacle station."""
    runs, n = [], 0
    for model, control, fails in models:
        for station in ["s01", *OBSTACLES]:
            n += 1
            runs.append(_run(n, model, station, control if station == "s01" else station not in fails))
    return runs


M_B_FAILS_S01 = _week(("m-a", True, {"s03", "s05"}), ("m-b", False, set()), ("m-c", True, {"s03"}))
"""m-a passes S01 and stops at s03 and s05; m-b fails S01 and passes every obstacle station, s05 among them; m-c
passes S01 and s05, stops at s03."""


def facts(runs: list[RunFact], corrections: list[Any] | None = None) -> WeekFacts:
    return msgspec.structs.replace(week_facts(runs, corrections), position=1000)


def matrix(facts_: WeekFacts, documents_format: int = DOCUMENTS_FORMAT) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(week_documents(facts_, documents_format).matrix)
    return out


def station(doc: dict[str, Any], code: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in doc["stations"] if s["code"] == code)
    return found


def test_a_model_that_failed_s01_is_left_out_of_the_obstacle_stations_rates():
    doc = matrix(facts(M_B_FAILS_S01))
    assert DOCUMENTS_FORMAT == 5 and doc["format"] == "canitbuy-matrix/5"
    s05 = station(doc, "s05")
    assert (s05["passed"], s05["results"], s05["rate"], s05["not_counted"]) == (1, 2, "0.5000", ["m-b"])
    s03 = station(doc, "s03")
    assert (s03["passed"], s03["results"], s03["rate"], s03["not_counted"]) == (0, 2, "0.0000", ["m-b"])
    s07 = station(doc, "s07")
    assert (s07["passed"], s07["results"], s07["not_counted"]) == (2, 2, ["m-b"])
    control = station(doc, "s01")  # the control: every model's S01 result
    assert (control["passed"], control["results"], control["rate"], control["not_counted"]) == (2, 3, "0.6667", [])
    assert doc["models"][1]["cells"]["s05"]["status"] == "passed", "the cell still shows what the run did"


def test_a_model_excluded_from_the_week_counts_at_no_station_s01_included():
    excluded = correction("model_week", "exclude", model="m-c", position=900)
    doc = matrix(facts(M_B_FAILS_S01, [excluded]))
    s05 = station(doc, "s05")
    assert (s05["passed"], s05["results"], s05["not_counted"]) == (0, 1, ["m-b", "m-c"])
    control = station(doc, "s01")
    assert (control["passed"], control["results"], control["not_counted"]) == (1, 2, ["m-c"])


PUBLISHED_SHA256 = {  # format: (ranking, Matrix) of M_B_FAILS_S01, as the code before format 5 wrote them
    1: ("e86de60d109b58d547aed1a3c0c9502ac30d78a6d1b7aceda9cf28283742ea4d",
        "683787c69094ce970e00a8b8d1b25c1c8021fc00518bc1eb8ff6a8dd13fb27c2"),
    2: ("86678cdebfc34a5643664f0a4cb46bf8621d4d60f60942b89fd5ef054bf9688d",
        "644237dbed554702ff7d11a5796522ee53140645f75233050d9c4bc2027c1531"),
    3: ("86678cdebfc34a5643664f0a4cb46bf8621d4d60f60942b89fd5ef054bf9688d",
        "4d2ddf951a9046943b8087233e7911c972d6f60cc70c80e9cb8e2a1a1799dbeb"),
    4: ("65ff4d008ec907c433f5a77e8168a3f2023eb169fa399437c6a0177eb4e1a145",
        "5cd83d0293b5e52df0465a13993d2ed253dfba146c22d4904f7b05c3d6c1f9c2"),
}


def test_weeks_published_in_formats_1_to_4_replay_to_their_bytes_counting_every_result():
    for documents_format, (ranking, matrix_) in PUBLISHED_SHA256.items():
        docs = week_documents(facts(M_B_FAILS_S01), documents_format)
        assert (hashlib.sha256(docs.ranking).hexdigest(), hashlib.sha256(docs.matrix).hexdigest()) == (
            ranking, matrix_), f"format {documents_format}"
        assert all("not_counted" not in s for s in json.loads(docs.matrix)["stations"])
    four = matrix(facts(M_B_FAILS_S01), 4)
    assert four["format"] == "canitbuy-matrix/4"
    s05 = station(four, "s05")
    assert (s05["passed"], s05["results"], s05["rate"]) == (2, 3, "0.6667"), "m-b's S05 pass counted, as published"
    assert week_documents(facts(M_B_FAILS_S01)).ranking == week_documents(facts(M_B_FAILS_S01), 4).ranking, (
        "format 5 changed the Matrix only: the ranking is canitbuy-ranking/3 in both")


def test_the_stops_and_station_charts_count_as_the_matrix_does():
    doc = msgspec.json.decode(week_documents(facts(M_B_FAILS_S01)).matrix, type=Matrix)
    stops = stops_chart(doc)
    s05 = next(s for s in stops.stations if s.code == "s05")
    assert (s05.passed, s05.results, s05.not_counted) == (1, 2, 1)
    assert (stops.models, stops.counted) == (3, 2)
    chart = station_chart("s05", "Sizes as images", [doc])
    [week] = chart.weeks
    assert (week.passed, week.results, week.rate, week.not_counted) == (1, 2, 0.5, ["m-b"])
    assert week.cells["m-b"] == "passed"


def test_the_weeks_chart_draws_no_unranked_share():
    ranking = msgspec.json.decode(week_documents(facts(M_B_FAILS_S01)).ranking, type=Ranking)
    assert [(e.model, e.ranked) for e in ranking.entries] == [("m-c", True), ("m-a", True), ("m-b", False)]
    data = weeks_chart([ranking])
    by_model = {s.model: s for s in data.series}
    assert [p.ranked for p in by_model["m-b"].points] == [False], "the numbers keep the unranked week"
    assert drawn_points(by_model["m-b"]) == [] and len(drawn_points(by_model["m-c"])) == 1
    svg = chart_svg("weeks", data, "t", "d")
    assert ">m-c<" in svg and ">m-a<" in svg and ">m-b<" not in svg, "no legend entry for a model never ranked"
