"""The charts over HTTP: each chart's numbers at its JSON address (CC BY), the pictures inline in the pages as
accessible SVG that our Content-Security-Policy can show (no inline styles), drawn once per set of numbers."""

from __future__ import annotations

import re

import msgspec
import pytest

from domain.projections.charts import CostChart, RankingChart, StationChart, StopsChart, WeeksChart

KINDS = {"ranking": RankingChart, "weeks": WeeksChart, "stops": StopsChart, "cost": CostChart}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_weekly_chart_has_its_numbers_at_a_json_address(site, kind: str) -> None:
    response = site.client.get(f"/api/charts/{kind}.json?week={site.week.week}")
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    chart = msgspec.json.decode(response.content, type=KINDS[kind])
    assert chart.license == "CC BY 4.0" and chart.chart == kind
    again = site.client.get(f"/api/charts/{kind}.json?week={site.week.week}",
                            headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304


def test_the_ranking_chart_holds_every_ranked_model_with_its_wilson_interval(site) -> None:
    chart = msgspec.json.decode(site.client.get("/api/charts/ranking.json").content, type=RankingChart)
    assert [r.model for r in chart.rows] == ["model-alpha", "model-beta", "model-gamma"]
    alpha = chart.rows[0]
    assert (alpha.passed, alpha.of, alpha.share, alpha.high) == (17, 17, 1.0, 1.0)
    assert 0.8 < alpha.low < 0.85


def test_the_cost_chart_divides_the_recorded_spend_by_the_runs(site) -> None:
    chart = msgspec.json.decode(site.client.get("/api/charts/cost.json").content, type=CostChart)
    alpha = next(r for r in chart.rows if r.model == "model-alpha")
    assert alpha.runs == 18 and alpha.cost_per_run_usd == pytest.approx(0.0007)


def test_the_charts_page_shows_every_chart_as_titled_svg_without_inline_styles(site) -> None:
    page = site.client.get("/charts").text
    svgs = re.findall(r"<svg .*?</svg>", page, flags=re.S)
    assert len(svgs) == 5
    for svg in svgs:
        assert 'role="img"' in svg and "<title id=" in svg and "<desc id=" in svg
        assert " style=" not in svg and "<style" not in svg
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "ids repeat across the charts"
    assert '<a href="/api/charts/ranking.json?week=' in page


def test_the_ranking_page_shows_the_forest_plot_and_a_station_page_its_weeks(site) -> None:
    assert 'id="chart-ranking"' in site.client.get("/ranking").text
    station = site.client.get("/course/s05").text
    assert 'id="chart-station"' in station and "/api/charts/station/s05.json" in station
    chart = msgspec.json.decode(site.client.get("/api/charts/station/s05.json").content, type=StationChart)
    assert chart.weeks[-1].cells["model-beta"] == "stopped" and chart.weeks[-1].cells["model-alpha"] == "passed"


def test_an_unknown_chart_or_station_is_a_clear_404(site) -> None:
    assert site.client.get("/api/charts/pie.json").status_code == 404
    assert site.client.get("/api/charts/station/s99.json").status_code == 404


def test_a_chart_is_drawn_the_same_each_time(site) -> None:
    from web.public.chart_svg import _drawn, chart_svg

    chart = msgspec.json.decode(site.client.get("/api/charts/stops.json").content, type=StopsChart)
    first = chart_svg("stops", chart, "t", "d")
    _drawn.clear()
    assert chart_svg("stops", chart, "t", "d") == first
