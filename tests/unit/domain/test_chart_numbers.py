"""The numbers behind the charts: drawn from the weeks' documents only, each a pure function of them."""

from __future__ import annotations

import msgspec
import pytest
from rich_week import rich_facts

from domain.courses.course import load_course
from domain.projections.charts import (
    Percents,
    RunCost,
    cost_chart,
    ranking_chart,
    station_chart,
    stops_chart,
    weeks_chart,
)
from domain.projections.documents import Matrix, Ranking, week_documents
from domain.projections.statistics import wilson
from web.public.week_views import ranking_rows

DOCS = week_documents(rich_facts())
RANKING = msgspec.json.decode(DOCS.ranking, type=Ranking)
MATRIX = msgspec.json.decode(DOCS.matrix, type=Matrix)
COURSE = load_course(MATRIX.course_version)


def test_the_ranking_chart_holds_the_ranked_models_in_place_order_with_their_wilson_intervals():
    chart = ranking_chart(RANKING)
    ranked = [e for e in RANKING.entries if e.ranked]
    assert [r.model for r in chart.rows] == [e.model for e in ranked]
    for row, entry in zip(chart.rows, ranked, strict=True):
        interval = wilson(entry.passed, entry.of)
        assert (row.place, row.passed, row.of) == (entry.place, entry.passed, entry.of)
        assert row.share == round(entry.passed / entry.of, 4) == float(entry.share or 0)
        assert (row.low, row.high) == (round(interval.low, 4), round(interval.high, 4))
        assert row.low <= row.share <= row.high


def test_weeks_are_charted_oldest_first_and_a_new_course_version_is_marked_where_it_starts():
    earlier = msgspec.structs.replace(RANKING, week="2026-W47", course_version="2.0", entries=RANKING.entries[:1])
    later = msgspec.structs.replace(RANKING, week="2026-W49")
    chart = weeks_chart([later, RANKING, earlier])
    assert chart.weeks == ["2026-W47", RANKING.week, "2026-W49"]
    assert [(c.week, c.course_version) for c in chart.course_changes] == [(RANKING.week, RANKING.course_version)]
    first, second = chart.series[0], chart.series[1]
    assert [p.week for p in first.points] == chart.weeks
    assert [p.week for p in second.points] == [RANKING.week, "2026-W49"], "a week without the model is left out"


def test_where_agents_stop_follows_the_stage_order_the_matrix_carries_and_sums_each_stage_without_excluded_stations():
    chart = stops_chart(MATRIX)
    assert [s.code for s in chart.stations] == [s.code for s in MATRIX.stations]
    assert chart.stations[0].stage == "control"
    assert [s.stage for s in chart.stages] == [g.key for g in MATRIX.stages if g.stations]
    for stage in chart.stages:
        counted = [s for s in chart.stations if s.stage == stage.stage and not s.excluded]
        assert (stage.passed, stage.results) == (sum(s.passed for s in counted), sum(s.results for s in counted))
        assert stage.name == COURSE.stage_name(stage.stage)
    assert [w.week for w in chart.over_weeks] == [MATRIX.week]


def test_where_agents_stop_over_the_weeks_puts_the_oldest_week_first():
    earlier = msgspec.structs.replace(MATRIX, week="2026-W40")
    chart = stops_chart(MATRIX, [earlier])
    assert [w.week for w in chart.over_weeks] == ["2026-W40", MATRIX.week]
    assert chart.over_weeks[0].stages == chart.over_weeks[1].stages == chart.stages


def test_cost_per_run_is_the_recorded_spend_over_the_ended_runs_and_models_without_one_are_left_out():
    models = [e.model for e in RANKING.entries]
    spend = [RunCost(model=models[0], runs_ended=18, actual_usd=0.0126),
             RunCost(model=models[1], runs_ended=0, actual_usd=0.0)]
    chart = cost_chart(RANKING, spend)
    assert [r.model for r in chart.rows] == [models[0]]
    row = chart.rows[0]
    entry = RANKING.entries[0]
    assert (row.runs, row.cost_usd, row.cost_per_run_usd) == (18, 0.0126, 0.0007)
    assert row.share == round(entry.passed / entry.of, 4) and row.ranked == entry.ranked


@pytest.mark.parametrize("code", ["s01", "s05", "s16"])
def test_a_station_chart_gives_its_rate_and_every_models_cell_per_week(code):
    older = msgspec.structs.replace(MATRIX, week="2026-W40", stations=[s for s in MATRIX.stations if s.code != code])
    chart = station_chart(code, COURSE.station(code).name, [MATRIX, older])
    assert [w.week for w in chart.weeks] == [MATRIX.week], "a week whose course lacks the station is left out"
    station = next(s for s in MATRIX.stations if s.code == code)
    week = chart.weeks[0]
    assert (week.passed, week.results) == (station.passed, station.results)
    assert week.rate == (round(station.passed / station.results, 4) if station.results else None)
    assert week.cells == {m.model: m.cells[code].status for m in MATRIX.models}
    assert chart.models == sorted(week.cells)


def _fourteen_of_seventeen() -> Ranking:
    entry = msgspec.structs.replace(RANKING.entries[0], ranked=True, place=1, passed=14, of=17, share="0.8235")
    return msgspec.structs.replace(RANKING, entries=[entry])


def test_every_chart_prints_a_share_from_passed_and_of_not_from_its_four_decimals():
    ranking = _fourteen_of_seventeen()
    [row] = ranking_chart(ranking).rows
    assert row.share == 0.8235  # the JSON keeps its four decimals
    assert row.percents() == Percents(share="82.4", low="59.0", high="93.8")  # 82.352...%, 58.97...%, 93.808...%
    [point] = weeks_chart([ranking]).series[0].points
    assert point.percents() == row.percents()
    [cost] = cost_chart(ranking, [RunCost(model=row.model, runs_ended=18, actual_usd=0.0126)]).rows
    assert (cost.passed, cost.of, cost.share, cost.percent()) == (14, 17, 0.8235, "82.4")
    stage = msgspec.structs.replace(stops_chart(MATRIX).stages[0], passed=14, results=17, share=0.8235)
    assert stage.percent() == "82.4"


def test_the_ranking_table_rounds_its_whole_percentages_as_the_charts_round_tenths():
    # One of eight counted (nine stations excluded): 12.5% in the charts, so 13% in the table, where round() gave 12.
    entry = msgspec.structs.replace(RANKING.entries[0], ranked=True, place=1, passed=1, of=8, share="0.1250")
    ranking = msgspec.structs.replace(RANKING, entries=[entry])
    [chart_row] = ranking_chart(ranking).rows
    [table_row], _ = ranking_rows(ranking)
    assert chart_row.percents().share == "12.5" and table_row.percent == 13
    [fourteen], _ = ranking_rows(_fourteen_of_seventeen())
    assert (fourteen.percent, fourteen.low, fourteen.high) == (82, 59, 94)
