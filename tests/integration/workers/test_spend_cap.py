"""Spend under control: the week's actual and projected spend on models (the week's spend JSON), and no model run
started once the week's runs have cost the weekly cap (the run stays scheduled; the built-in agents cost nothing)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

import anyio
import msgspec
import pytest

from adapters.models.lineup import WEEKLY
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.ports import StepRecord
from domain.agent.verdicts import Verdict
from web.app import create_app
from workers.executor import execute_run, spend_hold
from workers.leases import open_leases
from workers.plan import schedule_course
from workers.resources import build_resources

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

MONDAY_MORNING = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)  # 2026-W49
WEEK = "2026-W49"
LUNA = WEEKLY[0].model


@pytest.fixture
def capped(settings: Settings) -> Settings:
    return msgspec.structs.replace(settings, weekly_cap_usd=0.01)


@pytest.fixture
def runtime(capped: Settings) -> Iterator[Runtime]:
    with build_runtime(capped, lambda: MONDAY_MORNING) as rt:
        yield rt


def test_no_model_run_starts_past_the_weekly_cap_and_the_week_json_says_what_was_spent(
        runtime: Runtime, capped: Settings) -> None:
    spent, waiting = schedule_course(runtime, WEEK, [LUNA], stations=["s01", "s02"], requested_by="test")
    [builtin] = schedule_course(runtime, WEEK, ["baseline-robust"], stations=["s01"], requested_by="test")
    record = runtime.record
    record.start_run(spent, worker="test", browser_version="-", agent_version=WEEKLY[0].route)
    record.record_steps(spent, [StepRecord(number=1, url="http://s01.lab.localhost/", cost_usd=0.015),
                                StepRecord(number=2, url="http://s01.lab.localhost/", cost_usd=0.005)])
    record.finish_run(spent, Verdict(passed=True, outcome="passed"), steps=2, seconds=3.0)

    res = build_resources(runtime, open_leases(capped), lab_url="http://127.0.0.1:9", directory_url=None)
    ctx = {"resources": res}
    outcome = anyio.run(execute_run, ctx, str(waiting))
    assert outcome == "skipped: weekly spending cap reached ($0.02 of $0.01)"
    assert record.get_run(waiting).status == "scheduled"  # not started: it starts once the cap allows
    assert anyio.run(spend_hold, ctx, res, record.get_run(builtin)) is None  # the built-in agents cost nothing

    raised = msgspec.structs.replace(runtime.settings, weekly_cap_usd=1.0)
    with build_runtime(raised, lambda: MONDAY_MORNING) as roomy:
        more = build_resources(roomy, open_leases(raised), lab_url="http://127.0.0.1:9", directory_url=None)
        assert anyio.run(spend_hold, {"resources": more}, more, roomy.record.get_run(waiting)) is None

    with TestClient(create_app(capped), base_url="https://testserver") as client:
        body = client.get(f"/api/weeks/{WEEK}/spend.json").json()
        assert client.get("/api/weeks/not-a-week/spend.json").status_code == 400
    assert body["week"] == WEEK and body["cap_usd"] == 0.01 and body["cap_reached"] is True
    assert body["actual_usd"] == 0.02 and body["projected_usd"] == 0.04  # one more run at the average so far
    luna = next(m for m in body["models"] if m["model"] == LUNA)
    assert (luna["runs_ended"], luna["runs_to_start"]) == (1, 1)
    robust = next(m for m in body["models"] if m["model"] == "baseline-robust")
    assert robust["projected_usd"] == 0.0


def test_the_cap_is_a_setting_in_dollars() -> None:
    from adapters.settings import SettingsError

    assert Settings.from_env({"CANITBUY_WEEKLY_CAP_USD": "250"}).weekly_cap_usd == 250.0
    assert Settings.from_env({}).weekly_cap_usd is None
    with pytest.raises(SettingsError, match="must be a number of dollars, not 'lots'"):
        Settings.from_env({"CANITBUY_WEEKLY_CAP_USD": "lots"})
