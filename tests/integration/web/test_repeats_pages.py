"""Repeat runs on the site: /api/repeats.json (the read model's bytes, valid against its schema, with an ETag),
and beside the official ranking and in the Matrix the figures in text, only in a week with repeats.

The week is built through the real Record on both backends (the `settings` fixture): three repeats per model and
station, finished in repeat order (repeat 2 is the newest, the run the official ranking counts).
- model-alpha passes everything, every time;
- model-beta passes everything except repeat 2 at s03 (official: 16 of 17; repeats: 2 of 3 at s03, 67% agree),
  so on station outcomes (the majority) it equals alpha: McNemar p = 1, the two are tied in places 1-2;
- model-gamma stops at s02..s12 every time (6 of 17): its difference from the others is not chance.

A second week has eight repeats of model-delta, which passes repeats 0 to 4 at every obstacle station: 85 of 136
runs, 5 of 8 in each cell, so every share it prints is exactly 62.5%, 63% when rounded half up as the site
prints every share (round() of the document's 0.6250 gave 62%).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import jsonschema
import msgspec
import pytest

from adapters.readmodels import ReadModels
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.projections.statistics import percent_text, wilson
from domain.week.weeks import week_of
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

COURSE = load_course()
SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "docs" / "schemas" / "repeats.json").read_text())
GAMMA_STOPS = {f"s{n:02d}" for n in range(2, 13)}


def passes(model: str, station: str, repeat: int) -> bool:
    if model == "model-beta":
        return not (station == "s03" and repeat == 2)
    if model == "model-gamma":
        return station not in GAMMA_STOPS
    if model == "model-delta":
        return station == COURSE.control.code or repeat < 5
    return True


def build(runtime: Runtime, models: tuple[str, ...], repeats: int) -> str:
    record = runtime.record
    week = week_of(record.clock())
    for repeat in range(repeats):
        for model in models:
            for station in COURSE.codes:
                [run_id] = schedule_runs(record, [ScheduleRun.on_course(
                    station=station, model=model, requested_by="test", week=week, repeat=repeat)])
                record.start_run(run_id, worker="test", browser_version="chromium-test", agent_version="test")
                ok = passes(model, station, repeat)
                verdict = Verdict(passed=ok, outcome="passed" if ok else "stopped", stage=COURSE.station(station).stage,
                                  step=1, reason="The checkout's form opened." if ok else "The agent stopped.")
                record.finish_run(run_id, verdict, steps=1, seconds=1.0)
    return week


@pytest.fixture
def make_site(settings: Settings) -> Iterator[object]:
    settings = msgspec.structs.replace(settings, site_secret="test secret " * 4)
    clients: list[TestClient] = []

    def make(models: tuple[str, ...], repeats: int) -> tuple[TestClient, str, bytes]:
        with build_runtime(settings) as runtime:
            week = build(runtime, models, repeats)
            readmodels = ReadModels(settings, runtime.record)
            readmodels.catch_up()
            body = readmodels.repeats_bytes(week)
        client = TestClient(create_app(settings), base_url="https://testserver")
        clients.append(client.__enter__())
        return client, week, body

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def text_of(html: str) -> str:
    """The page's words without tags, whitespace collapsed (what a screen reader reads)."""
    import re

    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_repeats_json_pages_and_their_text(make_site) -> None:
    client, week, body = make_site(("model-alpha", "model-beta", "model-gamma"), 3)

    response = client.get(f"/api/repeats.json?week={week}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
    assert response.content == body
    document = response.json()
    jsonschema.validate(document, SCHEMA)
    assert document["license"] == "CC BY 4.0" and document["format"] == "canitbuy-repeats/2"
    assert document["most_repeats"] == 3
    assert response.headers["access-control-allow-origin"] == "*"
    again = client.get(f"/api/repeats.json?week={week}", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304
    assert client.get("/api/repeats.json").content == body, "the default week"
    assert client.get("/api/repeats.json?week=2020-W01").status_code == 404
    assert client.get("/api/repeats.json?as=published").status_code == 400
    schema = client.get("/api/schemas/repeats.json")
    assert schema.status_code == 200 and schema.json() == SCHEMA
    assert "repeats" in client.get("/api/schemas/").json()

    ranking = client.get(f"/ranking?week={week}")
    assert ranking.status_code == 200
    text = text_of(ranking.text)
    assert "Repeat runs" in text and "/api/repeats.json?week=" + week in ranking.text
    beta = next(m for m in document["models"] if m["model"] == "model-beta")
    assert (beta["runs"], beta["passed"]) == (51, 50)
    share = f"{percent_text(Fraction(50, 51), 0)}%"
    low, high = (f"{percent_text(b, 0)}%" for b in msgspec.structs.astuple(wilson(50, 51)))
    assert f"model-beta 50 of 51 runs {share} ({low}–{high})" in text
    assert "pass^1 98%, pass^2 96%, pass^3 94%" in text
    assert "tied: places 1–2; tied with model-alpha (the difference could be chance)" in text
    assert "model-gamma 18 of 51 runs 35% (24%–49%) pass^1 35%, pass^2 35%, pass^3 35% place 3" in text
    assert "model-alpha vs model-beta 17 0 0 1.000000 could be chance (tied)" in text
    assert "model-alpha vs model-gamma 17 11 0" in text and "unlikely to be chance" in text
    # The official ranking keeps the newest run: model-beta 16 of 17.
    assert "16 of 17" in text

    matrix = client.get(f"/matrix?week={week}")
    assert matrix.status_code == 200
    text = text_of(matrix.text)
    assert "(2 of 3 passed, 67% agree)" in text
    assert "(3 of 3 passed, 100% agree)" in text and "(0 of 3 passed, 100% agree)" in text
    assert "up to 3 repeats per model and station" in text

    # Rendered once per read-model position: the same bytes, and 304 to the ETag.
    assert client.get(f"/ranking?week={week}").content == ranking.content
    etag = matrix.headers["etag"]
    assert client.get(f"/matrix?week={week}", headers={"If-None-Match": etag}).status_code == 304


def test_a_week_without_repeats_shows_no_repeats_section(make_site) -> None:
    client, week, body = make_site(("model-alpha", "model-gamma"), 1)
    response = client.get(f"/api/repeats.json?week={week}")
    assert response.status_code == 200 and response.content == body
    jsonschema.validate(response.json(), SCHEMA)
    assert response.json()["most_repeats"] == 1
    ranking = client.get(f"/ranking?week={week}").text
    matrix = client.get(f"/matrix?week={week}").text
    # the ranking's own table; its chart's numbers are a second one
    assert ranking.count("<table") - ranking.count('<table class="chart-table"') == 1
    for page in (ranking, matrix):
        assert "Repeat runs" not in page and "repeat-runs" not in page and "/api/repeats.json" not in page
        assert " agree" not in text_of(page) and "pass^" not in page


def test_a_share_of_exactly_a_half_percent_is_rounded_up_on_the_pages(make_site) -> None:
    client, week, _ = make_site(("model-delta",), 8)
    document = client.get(f"/api/repeats.json?week={week}").json()
    [delta] = document["models"]
    assert (delta["runs"], delta["passed"], delta["share"]) == (136, 85, "0.6250")
    assert delta["pass_hat_k"][0] == {"k": 1, "value": "0.6250"}
    low, high = (f"{percent_text(b, 0)}%" for b in msgspec.structs.astuple(wilson(85, 136)))
    ranking = text_of(client.get(f"/ranking?week={week}").text)
    assert f"model-delta 85 of 136 runs 63% ({low}–{high}) pass^1 63%, pass^2 " in ranking
    matrix = text_of(client.get(f"/matrix?week={week}").text)
    assert "(5 of 8 passed, 63% agree)" in matrix and "62% agree" not in matrix
