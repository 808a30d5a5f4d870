"""The site's station pass rates count control-first, as the score does (course spec 2.1: "counted only after the
control store S01 was passed"; the registry and the Index "use the same control-first rule"): the Matrix footer, its
JSON (documents format 5), the stops chart and a station's chart leave out model-delta, which never passes S01 and
passes every other station. The weeks chart draws no unranked share. A week published in documents format 4 keeps its
published bytes, is not said to be corrected after publication, and its Matrix page says how its JSON counted."""

from __future__ import annotations

import gzip
import hashlib
import html as entities
import re
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from site_data import SITE_SECRET

from adapters.settings import Settings
from domain.projections.charts import StationChart, StopsChart
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

FORMAT_4 = Path(__file__).parents[2] / "fixtures" / "format-4"
FORMAT_4_WEEK = "2026-W48"
RULE = ("at each obstacle station only the results of the models that passed the control store S01 this week; "
        "S01’s own column counts every model’s S01 result")


def text(html: str) -> str:
    """The page's words, tags dropped and white space folded, as a reader sees them."""
    return re.sub(r"\s+", " ", entities.unescape(re.sub(r"<[^>]+>", "", html)))


def footer(html: str) -> dict[str, str]:
    """The Matrix footer's cells by station code, in words."""
    foot = html.split("<tfoot>", 1)[1].split("</tfoot>", 1)[0]
    return {code.lower(): text(cell).strip() for code, cell in re.findall(r'<td data-code="(S\d\d)">(.*?)</td>', foot)}


def svg_of(html: str, kind: str) -> str:
    figure = html.split(f'id="chart-{kind}"', 1)[1]
    return figure.split("<svg ", 1)[1].split("</svg>", 1)[0]


def test_the_matrix_footer_counts_an_obstacle_station_only_for_models_that_passed_s01(site) -> None:
    week = site.week.week
    html = site.client.get(f"/matrix?week={week}").text
    rates = footer(html)
    # s05: alpha passed, beta and gamma stopped; delta passed it but never passed S01
    assert rates["s05"] == "1/3 +1 not counted"
    assert rates["s02"] == "3/3 +1 not counted"
    assert rates["s01"] == "3/4", "the control counts every model's S01 result"
    assert ">Passed / counted results<" in html and RULE in text(html)
    assert "published in documents format" not in html, "published in format 5: nothing to say about the JSON"


def test_the_matrix_json_and_the_charts_count_as_the_footer(site) -> None:
    week = site.week.week
    matrix = site.client.get(f"/api/matrix.json?week={week}").json()
    assert matrix["format"] == "canitbuy-matrix/5"
    s05 = next(s for s in matrix["stations"] if s["code"] == "s05")
    assert (s05["passed"], s05["results"], s05["rate"], s05["not_counted"]) == (1, 3, "0.3333", ["model-delta"])
    stops = msgspec.json.decode(site.client.get(f"/api/charts/stops.json?week={week}").content, type=StopsChart)
    by_code = {s.code: s for s in stops.stations}
    assert (by_code["s05"].passed, by_code["s05"].results, by_code["s05"].not_counted) == (1, 3, 1)
    assert (by_code["s01"].passed, by_code["s01"].results) == (3, 4)
    assert (stops.models, stops.counted) == (4, 3)
    station = msgspec.json.decode(site.client.get("/api/charts/station/s05.json").content, type=StationChart)
    last = station.weeks[-1]
    assert (last.passed, last.results, last.not_counted) == (1, 3, ["model-delta"])
    assert last.cells["model-delta"] == "passed", "what the run did is still shown"
    page = text(site.client.get("/course/s05").text)
    assert "(model-delta not counted)" in page and "the models that passed S01 that week" in page


def test_the_weeks_chart_draws_no_unranked_share(site) -> None:
    html = site.client.get(f"/charts?week={site.week.week}").text
    weeks = svg_of(html, "weeks")
    assert ">model-alpha<" in weeks and ">model-delta<" not in weeks, "model-delta is unranked: not drawn"
    assert "Not drawn, because an unranked week's share is no score: model-delta in" in text(weeks)
    table = html.split('data-chart="weeks"', 1)[1].split("</table>", 1)[0]
    assert 'data-model="model-delta"' in table and "(unranked)" in table, "its numbers stay in the table"


def test_method_registry_and_station_pages_say_how_station_rates_count(site) -> None:
    method = text(site.client.get("/method").text)
    assert "A store’s pass rate (the Matrix’s footer, the charts, a station’s page) counts" in method
    assert "only the models that passed the control store S01 the same week" in method
    registry = text(site.client.get("/registry").text)
    assert "counted control-first" in registry and "only the models that passed the control store S01" in registry


@pytest.fixture(scope="module")
def format_4_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The format-4 fixture's event store (a week published in documents format 4), served by today's site."""
    data = tmp_path_factory.mktemp("format-4") / "var"
    data.mkdir()
    with gzip.open(FORMAT_4 / "canitbuy.sqlite3.gz") as packed, (data / "canitbuy.sqlite3").open("wb") as out:
        shutil.copyfileobj(packed, out)
    with TestClient(create_app(Settings(data_dir=data, site_secret=SITE_SECRET)),
                    base_url="https://testserver") as client:
        yield client


def test_a_week_published_in_format_4_keeps_its_bytes_and_is_not_said_to_be_corrected(format_4_site) -> None:
    client = format_4_site
    week_json = client.get(f"/api/weeks/{FORMAT_4_WEEK}.json").json()
    [publication] = week_json["publications"]
    published = client.get(f"/api/matrix.json?week={FORMAT_4_WEEK}")
    assert hashlib.sha256(published.content).hexdigest() == publication["matrix_sha256"]
    assert published.json()["format"] == "canitbuy-matrix/4"
    corrected = client.get(f"/api/matrix.json?week={FORMAT_4_WEEK}&as=corrected").json()
    assert corrected["format"] == "canitbuy-matrix/5"
    html = client.get(f"/matrix?week={FORMAT_4_WEEK}").text
    assert "corrected after publication" not in html, "nothing corrected it: only the format moved on"
    assert "This week was published in documents format 4, whose Matrix JSON counted every model’s result" in text(
        html)
    front = client.get("/").text
    assert "corrected after publication" not in front
