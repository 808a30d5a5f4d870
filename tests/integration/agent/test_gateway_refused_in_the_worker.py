"""A gateway that refuses our request (401, as for a rejected key) through the real executor: the reading station's
model reader is cut short as our error in the same words as the browser agent ("the gateway refused our request:
HTTP 401"), with one warning line and no traceback, and the browser runs so cut short leave Chromium as it is (no
relaunch). A real record (SQLite), the real lab, real Chromium and a real local HTTP server as the gateway."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.models.lineup import WEEKLY
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.fixed_gateways import INVALID_KEY, answering_every_call
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import build_resources

pytestmark = pytest.mark.anyio
LUNA = WEEKLY[0].model
REFUSED = "the gateway refused our request: HTTP 401"


@pytest.fixture(scope="module")
def refusing() -> Iterator[str]:
    with ThreadedApp(answering_every_call(INVALID_KEY, status=401)) as gate:
        yield f"{gate.url}/v1"


async def execute(tmp_path: Path, base: str, lab: LabServer, stations: list[str]) -> list[tuple[str, list[Any]]]:
    """Each station's run of LUNA executed in turn by one worker's resources (one Chromium): outcome and events."""
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4, model_base_url=base,
                        model_api_key="sk-rejected")
    ran = []
    with build_runtime(settings) as runtime:
        week = week_of(runtime.record.clock())
        ids = schedule_runs(runtime.record, [ScheduleRun.on_course(station=s, model=LUNA, requested_by="test",
                                                                   week=week) for s in stations])
        resources = build_resources(runtime, open_leases(settings), lab_url=lab.url_for(None), directory_url=None)
        try:
            for run_id in ids:
                outcome = await execute_run({"resources": resources}, str(run_id))
                ran.append((outcome, list(runtime.record.repository.event_store.get(run_id))))
        finally:
            await resources.aclose()
    return ran


def cut_short_as_ours(outcome: str, events: list[Any]) -> None:
    [cut] = [e for e in events if isinstance(e, Run.CutShort)]
    assert outcome == "cut_short" and (cut.cause, cut.detail, cut.steps) == ("our_error", REFUSED, 0), cut
    assert not [e for e in events if isinstance(e, (Run.StepRecorded, Run.Finished))]


async def test_a_reader_the_gateway_refuses_is_our_error_in_one_line_without_a_traceback(
        tmp_path: Path, refusing: str, lab: LabServer, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        [(outcome, events)] = await execute(tmp_path, refusing, lab, ["s12"])
    cut_short_as_ours(outcome, events)
    said = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and said[0].exc_info is None, caplog.text
    assert said[0].name == "canitbuy.worker" and said[0].getMessage().endswith(f"cut short: {REFUSED}")
    assert "Traceback" not in caplog.text


async def test_browser_runs_the_gateway_refuses_are_our_error_and_leave_chromium_running(
        tmp_path: Path, refusing: str, lab: LabServer, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        ran = await execute(tmp_path, refusing, lab, ["s01", "s02", "s12"])
    for outcome, events in ran:
        cut_short_as_ours(outcome, events)
    assert "relaunching Chromium" not in caplog.text and "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.exc_info], caplog.text
