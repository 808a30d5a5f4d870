"""The front page's and the ranking's "N obstacle stations" is the number of stations that count in the week shown
(the ranking document's `stations`, the N of each "x of N"), not a fixed 17: a station left out by a correction makes
it 16. The published JSON is as it was."""

from __future__ import annotations

import hashlib
import re
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from site_data import make_week, site_settings

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.eventlog.commands import LeaveStationOut
from domain.eventlog.handlers import issue_correction
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


@dataclass
class Served:
    settings: Settings
    week: str
    client: TestClient


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with site_settings(request.param, tmp_path_factory.mktemp("counted") / "var", "canitbuy_counted") as settings:
        with build_runtime(settings) as runtime:
            week = make_week(runtime).week
        with TestClient(create_app(settings), base_url="https://testserver") as client:
            yield Served(settings, week, client)


def text(html: str) -> str:
    """The page's words, tags dropped and white space folded, as a reader sees them."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_the_pages_say_how_many_stations_count_in_the_week_shown(served: Served) -> None:
    client, week = served.client, served.week
    published = client.get(f"/api/ranking.json?week={week}").content
    front, ranking = text(client.get("/").text), text(client.get(f"/ranking?week={week}").text)
    assert f"Share of the 17 obstacle stations passed, week {week}" in front and "17 of 17" in front
    assert "the share of the 17 obstacle stations each model passed in one ISO week, counted" in ranking
    assert "with 17 stations it is wide" in ranking

    with build_runtime(served.settings) as runtime:
        issue_correction(runtime.record, runtime.readmodels, LeaveStationOut(
            station="s05", week=week, reason="the lab's size list was broken",
            public_text="S05 is left out of the week.", by="staff"))
        record = runtime.record.week_record(week)
        assert record is not None
        publication = record.publications[-1]
    deadline = time.monotonic() + 30
    while len(client.get(f"/api/ranking.json?week={week}&as=corrected").json()["stations"]) != 16:
        assert time.monotonic() < deadline, "the site never read the correction"
        time.sleep(0.2)

    front, ranking = text(client.get("/").text), text(client.get(f"/ranking?week={week}").text)
    assert f"Share of the 16 obstacle stations passed, week {week}" in front and "16 of 16" in front
    assert "the share of the 16 obstacle stations each model passed in one ISO week (S05 left out" in ranking
    assert "with 16 stations it is wide" in ranking
    assert "17 obstacle stations" not in front + ranking
    assert "16 of 16" in ranking and "17 of 17" not in ranking  # a week in progress: no table as published

    after = client.get(f"/api/ranking.json?week={week}").content
    assert after == published, "the published ranking's bytes are as they were"
    assert hashlib.sha256(after).hexdigest() == publication.ranking_sha256


def test_before_any_week_the_ranking_counts_the_course_in_force(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "var", site_secret="an empty site's secret " * 2)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        ranking = text(client.get("/ranking").text)
    assert "No results have been recorded yet" in ranking
    assert "the share of the 17 obstacle stations each model passed in one ISO week, counted" in ranking
