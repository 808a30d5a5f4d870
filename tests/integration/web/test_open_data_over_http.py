"""Issue 19 items 3 and 4 against a real server (uvicorn on a free port): a researcher loads a week's runs with one
line of pandas from the site's URL, the documented DuckDB query over the served files gives the site's ranking, and
the files carry their content types, sha256 ETags and caching, with HEAD and Range for readers that seek."""

from __future__ import annotations

import hashlib
import io
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import httpx
import pandas
import pyarrow.parquet as pq
import pytest
from site_data import PRIVATE_MODEL, SiteWeek, make_week, site_settings

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.eventlog.commands import SetRunOutcome
from domain.eventlog.handlers import issue_correction
from tests.e2e.web.served import served as serving
from web.app import create_app

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Served:
    url: str
    settings: Settings
    week: SiteWeek


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with site_settings(request.param, tmp_path_factory.mktemp("data") / "var", "canitbuy_data") as settings:
        with build_runtime(settings) as runtime:
            week = make_week(runtime)
        with serving(create_app(settings), start_seconds=60) as url:
            yield Served(url, settings, week)


def documented_sql() -> str:
    found = re.search(r"## Recompute the ranking.*?```sql\n(.*?)```", (ROOT / "docs" / "dataset.md").read_text(), re.S)
    assert found
    return found.group(1)


def files_listed(served: Served) -> dict[str, tuple[int, str, str]]:
    """The week's page: file name to (size, sha256, the release's address)."""
    page = httpx.get(f"{served.url}/data/{served.week.week}").text
    rows = re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a></th>\s*<td>(\d+)</td>\s*'
                      r'<td class="mono">([0-9a-f]{64})</td>\s*<td><a href="([^"]+)">', page)
    return {name: (int(size), digest, href) for name, size, digest, href in rows}


def test_one_line_of_pandas_loads_the_weeks_runs_from_the_site(served):
    runs = pandas.read_parquet(f"{served.url}/data/{served.week.week}/runs.parquet")
    assert len(runs) == len(served.week.runs) == 4 * 18
    assert set(runs["model"]) == {"model-alpha", "model-beta", "model-gamma", "model-delta"}
    assert str(runs["ended_at"].dtype) == "datetime64[us, UTC]" and runs["passed"].dtype == bool
    steps = pandas.read_csv(f"{served.url}/data/{served.week.week}/steps.csv")
    assert len(steps) == 2 * len(runs) and (steps["tokens_in"] > 0).all()


def test_the_documented_query_over_the_served_files_gives_the_sites_ranking(served):
    week = served.week.week
    db = duckdb.connect()
    for table in ("runs", "stations", "corrections"):
        db.register(table, pandas.read_parquet(f"{served.url}/data/{week}/{table}.parquet"))
    got = db.execute(documented_sql()).fetchall()
    ranking = httpx.get(f"{served.url}/api/ranking.json", params={"week": week}).json()
    assert got == [(e["model"], e["ranked"], e["passed"], e["of"], e["place"]) for e in ranking["entries"]]
    assert [place for *_, place in got] == [1, 2, 2, None]  # a shared place and an unranked model


def test_the_files_say_what_they_are_and_how_long_to_keep_them(served):
    week = served.week.week
    listed = files_listed(served)
    assert set(listed) >= {"runs.parquet", "runs.csv", "steps.parquet", "README.md", "SHA256SUMS"}
    for name, (size, digest, release_href) in listed.items():
        current = httpx.get(f"{served.url}/data/{week}/{name}")
        assert current.status_code == 200 and len(current.content) == size
        assert hashlib.sha256(current.content).hexdigest() == digest and current.headers["etag"] == f'"{digest}"'
        assert current.headers["cache-control"] == "public, max-age=300"
        assert current.headers["access-control-allow-origin"] == "*"  # notebooks on other origins read it
        fixed = httpx.get(served.url + release_href)
        assert fixed.content == current.content
        assert fixed.headers["cache-control"] == "public, max-age=31536000, immutable"
    types = {name: httpx.head(f"{served.url}/data/{week}/{name}").headers["content-type"] for name in listed}
    assert types["runs.parquet"] == "application/vnd.apache.parquet"
    assert types["runs.csv"].startswith("text/csv") and types["README.md"].startswith("text/markdown")
    sums = httpx.get(f"{served.url}/data/{week}/SHA256SUMS").text
    assert sums == "".join(f"{listed[n][1]}  {n}\n" for n in sorted(listed) if n != "SHA256SUMS")


def test_readers_that_seek_get_the_footer_by_range(served):
    url = f"{served.url}/data/{served.week.week}/runs.parquet"
    whole = httpx.get(url).content
    tail = httpx.get(url, headers={"Range": f"bytes={len(whole) - 8}-"})
    assert tail.status_code == 206 and tail.content == whole[-8:] and tail.content.endswith(b"PAR1")
    assert int(httpx.head(url).headers["content-length"]) == len(whole)
    assert httpx.get(url, headers={"If-None-Match": httpx.get(url).headers["etag"]}).status_code == 304
    assert pq.read_table(io.BytesIO(whole)).num_rows == 4 * 18


def test_private_tests_never_reach_the_dataset(served):
    week = served.week.week
    for name in files_listed(served):
        body = httpx.get(f"{served.url}/data/{week}/{name}").content
        assert PRIVATE_MODEL.encode() not in body and b"acme" not in body
        assert str(served.week.private_run).encode() not in body


def test_the_index_and_the_week_archive_lead_to_the_files(served):
    week = served.week.week
    index = httpx.get(f"{served.url}/data")
    assert index.status_code == 200 and f'href="/data/{week}/runs.parquet"' in index.text
    assert f'href="/data/{week}"' in httpx.get(f"{served.url}/weeks/{week}").text
    assert httpx.get(f"{served.url}/data/2020-W01/runs.parquet").status_code == 404
    assert httpx.get(f"{served.url}/data/{week}/secrets.parquet").status_code == 404


def test_a_correction_makes_a_new_release_and_the_old_address_says_which(served):
    before = files_listed(served)
    old_href = before["runs.parquet"][2]
    with build_runtime(served.settings) as runtime:
        issue_correction(runtime.record, runtime.readmodels, SetRunOutcome(
            run_id=served.week.runs[("model-beta", "s03")], outcome="passed", reason="judge bug",
            public_text="model-beta passed s03.", by="staff"))
    deadline = time.monotonic() + 30
    while (after := files_listed(served))["runs.parquet"][2] == old_href:
        assert time.monotonic() < deadline, "the site never made a new release"
        time.sleep(0.3)
    assert after["verdicts.parquet"][1] != before["verdicts.parquet"][1]  # as corrected moved
    # The provisional publication still stands: runs as published are the same rows.
    assert after["runs.parquet"][1] == before["runs.parquet"][1]
    gone = httpx.get(served.url + old_href)
    assert gone.status_code == 404 and after["runs.parquet"][2].split("/")[3] in gone.text
