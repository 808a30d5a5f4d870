"""The week's page and JSON show the sha256 of the events each publication was computed from, and `canitbuy audit
verify --published URL` checks a file downloaded from the site against the site's published values (uvicorn on a
free port, the command in its own process). Publication 2 is recorded as publications were before they recorded
events: the page and the JSON say so and the command says its events are not anchored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import jsonschema
import pytest
from site_data import SiteWeek, make_week, run_one, site_settings

from adapters.wiring import build_runtime
from domain.projections.canonical import sha256_hex
from tests.e2e.web.served import free_port
from tests.e2e.web.served import served as serving
from tests.integration.store.audit_files import lines_of, resealed, verify
from tests.integration.store.audit_files import refused as one_line
from web.app import create_app

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Served:
    url: str
    week: SiteWeek
    publications: list  # PublicationFact, as the read models list them


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with site_settings(request.param, tmp_path_factory.mktemp("data") / "var", "canitbuy_verify") as settings:
        with build_runtime(settings) as runtime:
            week = make_week(runtime)
            # a second publication as the code before events_sha256 recorded one (the field's default)
            run_one(runtime, "model-epsilon", "s01", week.week)
            runtime.readmodels.catch_up()
            docs = runtime.readmodels.week_documents(week.week)
            runtime.readmodels.store_published(docs)
            runtime.record.record_publication(
                week=week.week,
                position=docs.position,
                ranking_sha256=sha256_hex(docs.ranking),
                matrix_sha256=sha256_hex(docs.matrix),
                course_version=docs.course_version,
                by="test@canitbuy.com",
                documents_format=docs.documents_format,
            )
            runtime.readmodels.catch_up()
            publications = runtime.readmodels.publications(week.week)
        assert publications[0].events_sha256 is not None and publications[1].events_sha256 is None
        with serving(create_app(settings), start_seconds=60) as url:
            yield Served(url, week, publications)


def download(served: Served, number: int, folder: Path) -> Path:
    answer = httpx.get(f"{served.url}/weeks/{served.week.week}/audit-{number}.jsonl")
    assert answer.status_code == 200
    (path := folder / f"audit-{number}.jsonl").write_bytes(answer.content)
    return path


def week_json(served: Served) -> str:
    return f"{served.url}/api/weeks/{served.week.week}.json"


def test_the_week_json_lists_each_publication_with_its_three_sha256(served):
    answer = httpx.get(week_json(served))
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    jsonschema.validate(body, json.loads((ROOT / "docs" / "schemas" / "week.json").read_text()))
    assert (body["format"], body["week"]) == ("canitbuy-week/1", served.week.week)
    assert [
        (p["number"], p["position"], p["ranking_sha256"], p["matrix_sha256"], p["events_sha256"])
        for p in body["publications"]
    ] == [
        (n, p.position, p.ranking_sha256, p.matrix_sha256, p.events_sha256)
        for n, p in enumerate(served.publications, start=1)
    ]
    assert body["publications"][0]["audit_file"] == f"/weeks/{served.week.week}/audit-1.jsonl"
    assert httpx.get(f"{served.url}/api/weeks/2026-W01.json").status_code == 404


def test_the_week_page_shows_the_events_sha256_and_the_command_that_checks_against_it(served):
    page = httpx.get(f"{served.url}/weeks/{served.week.week}").text
    first, second = served.publications
    assert f'<dt>Events sha256</dt><dd class="mono">{first.events_sha256}</dd>' in page
    assert (
        "<dt>Events sha256</dt><dd>not recorded: this publication was made before publications recorded the "
        "sha256 of the events they were computed from</dd>"
    ) in page
    assert (
        f"canitbuy audit verify canitbuy-{served.week.week}-publication-1.jsonl --published "
        f"https://canitbuy.com/api/weeks/{served.week.week}.json"
    ) in page
    assert "compares them with the ones above" in page and "says that the events\n  are not anchored" in page
    assert "compares their sha256 with the ones above" not in page


def test_a_file_from_the_site_verifies_against_the_sites_published_values(served, tmp_path):
    done = verify(download(served, 1, tmp_path), "--published", week_json(served))
    assert done.returncode == 0, done.stderr
    assert f"events  sha256 {served.publications[0].events_sha256}" in done.stdout
    assert "As published: the ranking, Matrix and events sha256 equal those of publication 1" in done.stdout


def test_a_publication_without_an_events_sha256_verifies_with_its_events_not_anchored(served, tmp_path):
    done = verify(download(served, 2, tmp_path), "--published", week_json(served))
    assert done.returncode == 0, done.stderr
    assert (
        "As published, events not anchored: the ranking and Matrix sha256 equal those of publication 2" in done.stdout
    )


def test_a_resealed_file_with_other_events_is_refused_against_the_site(served, tmp_path):
    lines = lines_of(download(served, 1, tmp_path))
    for line in lines:
        if line.get("type") == "Run.Started":
            line["payload"]["agent_version"] = "someone-else/9.9"
    forged = resealed(lines, tmp_path / "forged.jsonl")
    err = one_line(verify(forged, "--published", week_json(served)))
    assert f"events sha256 (published {served.publications[0].events_sha256}" in err


def test_an_address_that_gives_no_published_values_is_one_line(served, tmp_path):
    file = download(served, 1, tmp_path)
    missing = f"{served.url}/api/weeks/2026-W01.json"
    assert f"cannot fetch {missing}: HTTP 404 Not Found" in one_line(verify(file, "--published", missing))
    nobody = f"http://127.0.0.1:{free_port()}/api/weeks/{served.week.week}.json"
    assert f"cannot fetch {nobody}: connection refused" in one_line(verify(file, "--published", nobody))
    ranking = f"{served.url}/api/ranking.json?week={served.week.week}"
    assert "is not a week's JSON" in one_line(verify(file, "--published", ranking))
    page = f"{served.url}/weeks/{served.week.week}"
    assert "is not a week's JSON" in one_line(verify(file, "--published", page))
