"""A matplotlib drawing made fit for a page: no inline styles (our CSP refuses them), ids unique to the chart,
a title and a description that name it, and the same bytes each time."""

from __future__ import annotations

import re

from domain.projections.charts import IntervalRow, RankingChart
from web.public.chart_svg import _drawn, chart_svg

CHART = RankingChart(chart="ranking", week="2026-W48", course_version="2.1", rows=[
    IntervalRow(model="a", label="Shop & Co <1>", place=1, passed=17, of=17, share=1.0, low=0.8157, high=1.0),
    IntervalRow(model="b", label="Costs $5", place=2, passed=12, of=17, share=0.7059, low=0.4687, high=0.8672),
])


def test_the_drawing_has_no_inline_style_and_every_id_carries_the_charts_prefix():
    svg = chart_svg("ranking", CHART, "Who leads", "A & B")
    assert " style=" not in svg and "<style" not in svg and "<metadata" not in svg
    assert svg.startswith('<svg class="chart" role="img" aria-labelledby="chart-ranking-title" '
                          'aria-describedby="chart-ranking-desc"')
    ids = re.findall(r' id="([^"]+)"', svg)
    assert ids and all(i.startswith("chart-ranking-") for i in ids)
    refs = re.findall(r'(?:xlink:href="#|url\(#)([^")]+)', svg)
    assert set(refs) <= set(ids)


def test_the_title_description_and_labels_are_escaped_text():
    svg = chart_svg("ranking", CHART, "Who <leads>", "A & B")
    assert '<title id="chart-ranking-title">Who &lt;leads&gt;</title>' in svg
    assert '<desc id="chart-ranking-desc">A &amp; B</desc>' in svg
    assert "Shop &amp; Co &lt;1&gt;" in svg and "Costs $5" in svg


def test_the_same_numbers_draw_the_same_bytes():
    first = chart_svg("ranking", CHART, "t", "d")
    _drawn.clear()
    assert chart_svg("ranking", CHART, "t", "d") == first
