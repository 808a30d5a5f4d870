"""Re-runs on the public pages: the newest run of the week counts for a cell, so a later attempt replaces an earlier
result. The Matrix marks a cell whose run is not its only attempt ("try 2/2") and links the others' recordings; a
run's page says "attempt N of M for this cell this week", links the others and says which counts. A private test is
never an attempt, and the published JSON documents carry nothing of it. Both backends, over the real record.

The week is site_data's (four models on every station, a private test elsewhere) plus:
- model-beta at S03, stopped on Monday, re-run from the desk later in the week and passed (attempt 2 counts);
- model-epsilon at S01, cut short by our error, then the Monday-afternoon repeat (attempt 2) passed;
- model-alpha at S04, a private test of the same model and station (organisation acme) between its public run and a
  public re-run: the cell has 2 attempts, not 3, and the private run shows nowhere;
- model-alpha at S06, re-run from the desk and cut short: the first attempt still counts, the cell says so.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import msgspec
import pytest
from site_data import COURSE, SITE_SECRET, SiteWeek, make_week, site_settings

from adapters.wiring import Runtime, build_runtime
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.eventlog.commands import PublishWeek, ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.publishing import publish_week
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

STAFF_EMAIL = "staff@canitbuy.com"


@dataclass
class RerunSite:
    week: SiteWeek
    client: TestClient
    beta_rerun: UUID
    epsilon_cut: UUID
    epsilon_repeat: UUID
    alpha_private: UUID
    alpha_rerun: UUID
    alpha_cut: UUID


def _run(runtime: Runtime, model: str, station: str, week: str, *, passed: bool | None, by: str = STAFF_EMAIL,
         attempt: int = 1, org: str | None = None) -> UUID:
    """A run of `model` at `station` that passes, stops (passed False) or is cut short by our error (None)."""
    record = runtime.record
    command = ScheduleRun.on_course(station=station, model=model, requested_by=by, week=week, attempt=attempt)
    if org is None:
        [run_id] = schedule_runs(record, [command])
    else:  # a private test, written as site_data writes its own
        private = Run.schedule(**msgspec.structs.asdict(msgspec.structs.replace(command, org=org)), at=record.clock())
        record.save(private)
        run_id = private.id
    record.start_run(run_id, worker="test", browser_version="chromium-test", agent_version="test")
    if passed is None:
        record.cut_short_run(run_id, "our_error", "the browser crashed")
    else:
        stage = COURSE.station(station).stage
        record.finish_run(run_id, Verdict(passed=passed, outcome="passed" if passed else "stopped", stage=stage, step=1,
                                          reason="The checkout's form opened." if passed else "It stopped."),
                          steps=1, seconds=1.0)
    return run_id


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RerunSite]:
    with site_settings(request.param, tmp_path_factory.mktemp("reruns") / "var", "canitbuy_reruns") as settings:
        with build_runtime(settings) as runtime:
            week = make_week(runtime, publish=False)
            w = week.week
            beta_rerun = _run(runtime, "model-beta", "s03", w, passed=True)
            epsilon_cut = _run(runtime, "model-epsilon", "s01", w, passed=None, by="scheduler")
            epsilon_repeat = _run(runtime, "model-epsilon", "s01", w, passed=True, by="scheduler", attempt=2)
            alpha_private = _run(runtime, "model-alpha", "s04", w, passed=False, org="acme")
            alpha_rerun = _run(runtime, "model-alpha", "s04", w, passed=True)
            alpha_cut = _run(runtime, "model-alpha", "s06", w, passed=None)
            publish_week(runtime.record, runtime.readmodels, PublishWeek(week=w, by="test@canitbuy.com"))
        with TestClient(create_app(msgspec.structs.replace(settings, site_secret=SITE_SECRET)),
                        base_url="https://testserver") as client:
            yield RerunSite(week, client, beta_rerun, epsilon_cut, epsilon_repeat, alpha_private, alpha_rerun,
                            alpha_cut)


def cell(page: str, model: str, code: str) -> str:
    """The HTML of one Matrix cell (model's row, station's column)."""
    row = re.search(rf'<tr id="model-{re.escape(model)}">(.*?)</tr>', page, re.S)
    assert row, f"no row for {model}"
    found = re.search(rf'<td data-code="{code.upper()}">(.*?)</td>', row.group(1), re.S)
    assert found, f"no cell {model} {code}"
    return found.group(1)


def run_page(site: RerunSite, run: UUID | str) -> str:
    """A run's page, its white space run together (the template wraps its sentences)."""
    response = site.client.get(f"/runs/{run}")
    assert response.status_code == 200
    return " ".join(response.text.split())


def matrix(site: RerunSite) -> str:
    response = site.client.get(f"/matrix?week={site.week.week}")
    assert response.status_code == 200
    return response.text


def test_a_cell_run_twice_is_marked_and_links_the_earlier_attempt(site: RerunSite) -> None:
    page = matrix(site)
    first = site.week.runs[("model-beta", "s03")]
    beta = cell(page, "model-beta", "s03")
    assert f'href="/runs/{site.beta_rerun}"' in beta  # the cell is the re-run, which passed
    assert "try 2/2" in beta and f'href="/runs/{first}"' in beta
    assert "re-run: attempt 2 of 2 this week (the newest result counts)" in beta
    assert "earlier: attempt 1 (stopped, replaced by a newer attempt)" in beta
    epsilon = cell(page, "model-epsilon", "s01")
    assert f'href="/runs/{site.epsilon_repeat}"' in epsilon and f'href="/runs/{site.epsilon_cut}"' in epsilon
    assert "try 2/2" in epsilon and "earlier: attempt 1 (cut short by our error, not a result)" in epsilon
    # The legend says the rule, and how many cells ran more than once (beta S03, epsilon S01, alpha S04 and S06).
    assert 'id="rerun-note"' in page and "4 cells ran more than once" in page
    assert "The newest run of the week counts for a cell" in page
    for path in ("/api/matrix.json", "/api/ranking.json"):  # HTML only: the documents carry nothing of it
        body = site.client.get(f"{path}?week={site.week.week}").text
        assert "try 2/2" not in body and "attempts" not in body and str(site.alpha_private) not in body


def test_a_later_attempt_cut_short_replaces_nothing_and_is_named(site: RerunSite) -> None:
    alpha = cell(matrix(site), "model-alpha", "s06")
    first = site.week.runs[("model-alpha", "s06")]
    assert f'href="/runs/{first}"' in alpha and "try 1/2" in alpha and f'href="/runs/{site.alpha_cut}"' in alpha
    assert ("attempt 1 of 2 this week (the newest result counts); "
            "later: attempt 2 (cut short by our error, not a result)") in alpha
    assert "re-run:" not in alpha


def test_a_cell_run_once_shows_no_mark(site: RerunSite) -> None:
    page = matrix(site)
    assert 'id="rerun-note"' in page  # the week has re-runs, elsewhere
    for model, code in (("model-alpha", "s02"), ("model-gamma", "s03"), ("model-delta", "s01")):
        once = cell(page, model, code)
        assert 'class="attempts"' not in once and "try " not in once and "attempt" not in once, (model, code)
        run = run_page(site, site.week.runs[(model, code)])
        assert 'id="attempts"' not in run and "for this cell this week" not in run


def test_a_run_page_says_which_attempt_it_is_and_which_counts(site: RerunSite) -> None:
    first = site.week.runs[("model-beta", "s03")]
    newer = run_page(site, site.beta_rerun)
    assert "Attempt 2 of 2 for this cell this week" in newer
    assert f'<a href="/runs/{first}">Attempt 1</a>: stopped, replaced by a newer attempt.' in newer
    assert "This run, attempt 2, is the one that counts: it is the newest result." in newer
    older = run_page(site, first)
    assert "Attempt 1 of 2 for this cell this week" in older
    assert f'<a href="/runs/{site.beta_rerun}">Attempt 2</a> is the one that counts, not this run' in older
    cut = run_page(site, site.epsilon_cut)
    assert "Attempt 1 of 2 for this cell this week" in cut and "a run cut short is not a result" in cut
    assert f'<a href="/runs/{site.epsilon_repeat}">Attempt 2</a> is the one that counts' in cut


def test_a_private_test_is_never_an_attempt(site: RerunSite) -> None:
    private = str(site.alpha_private)
    page = matrix(site)
    alpha = cell(page, "model-alpha", "s04")
    first = site.week.runs[("model-alpha", "s04")]
    assert "try 2/2" in alpha and f'href="/runs/{first}"' in alpha and f'href="/runs/{site.alpha_rerun}"' in alpha
    assert private not in page and "acme" not in page
    for run in (first, site.alpha_rerun):
        shown = run_page(site, run)
        assert "of 2 for this cell this week" in shown and private not in shown and "acme" not in shown
    assert site.client.get(f"/runs/{private}").status_code == 404

