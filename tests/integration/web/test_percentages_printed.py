"""The site prints each share from its exact value, rounded half up: a model that passed 14 of 17 obstacle stations
(82.352...%) is 82.4% in the charts and 82% in the ranking table, never 82.3% from the share's four decimals
(0.8235), which the chart JSON keeps as it was. A real record (SQLite), a published week, the site over HTTP."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import msgspec

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.commands import PublishWeek, ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.projections.charts import RankingChart
from domain.week.publishing import publish_week
from domain.week.weeks import week_of
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

COURSE = load_course()
MODEL = "model-fourteen"
STOPS = COURSE.obstacle_codes[:3]
"""The three obstacle stations it stops at: 14 of 17 passed."""


def run_week(runtime: Runtime) -> str:
    record = runtime.record
    week = week_of(record.clock())
    for code in COURSE.codes:
        station = COURSE.station(code)
        [run_id] = schedule_runs(
            record, [ScheduleRun.on_course(station=code, model=MODEL, requested_by="test", week=week)]
        )
        record.start_run(run_id, worker="test", browser_version="chromium-test", agent_version="test")
        stopped = code in STOPS
        verdict = Verdict(
            passed=not stopped,
            outcome="stopped" if stopped else "passed",
            stage=station.stage,
            step=2,
            reason="stopped" if stopped else "reached the checkout",
            facts_right=None if stopped or not station.is_reading else 5,
        )
        record.finish_run(run_id, verdict, steps=2, seconds=1.0)
    publish_week(record, runtime.readmodels, PublishWeek(week=week, by="test@canitbuy.com"))
    return week


def test_fourteen_of_seventeen_is_82_4_percent_in_the_charts_and_82_in_the_ranking_table(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4)
    with build_runtime(settings) as runtime:
        week = run_week(runtime)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        chart = msgspec.json.decode(client.get(f"/api/charts/ranking.json?week={week}").content, type=RankingChart)
        ranking = client.get(f"/ranking?week={week}").text
        charts = client.get(f"/charts?week={week}").text
    [row] = chart.rows
    assert (row.passed, row.of, row.share) == (14, 17, 0.8235)  # the JSON's four decimals, unchanged
    for page in (ranking, charts):
        cells = re.search(
            rf'<tr data-model="{MODEL}">.*?data-key="share">([^<]*)</td>'
            r'<td class="num" data-key="low">([^<]*)</td><td class="num" data-key="high">([^<]*)</td>',
            page,
            re.S,
        )
        assert cells is not None
        assert cells.groups() == ("82.4%", "59.0%", "93.8%")  # Wilson bounds 0.58970... and 0.93808...
        assert "leads with first place at 82.4%" in page
    assert re.search(r"14 of 17</td>\s*<td class=\"nowrap\">82% <span class=\"small muted\">\(59–94%\)", ranking)
