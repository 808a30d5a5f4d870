"""A run whose model the worker does not know (scheduled before the desk checked names, 77b83ca) is cut short as
our error, with one log line naming the run and the model: no traceback, as there was for every such run."""

from __future__ import annotations

import logging

import anyio
import pytest

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.week.weeks import week_of
from workers.executor import execute_run
from workers.leases import open_leases
from workers.plan import schedule_course
from workers.resources import build_resources


def test_a_run_of_an_unknown_model_is_cut_short_with_one_log_line_and_no_traceback(
        settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    with build_runtime(settings) as runtime:
        [run_id] = schedule_course(runtime, week_of(runtime.record.clock()), ["nope"], stations=["s01"],
                                   requested_by="test")
        leases = open_leases(settings)
        # No lab answers at 127.0.0.1:9; the run never gets as far as asking it.
        res = build_resources(runtime, leases, lab_url="http://127.0.0.1:9", directory_url=None)

        async def execute() -> str:
            try:
                return await execute_run({"resources": res}, str(run_id))
            finally:
                await res.aclose()

        try:
            with caplog.at_level(logging.INFO):
                outcome = anyio.run(execute)
        finally:
            leases.close()
        run = runtime.record.get_run(run_id)
        events = runtime.record.read_log(limit=10_000)
    said = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1, caplog.text
    assert said[0].name == "canitbuy.worker" and said[0].exc_info is None, caplog.text
    assert str(run_id) in said[0].getMessage() and "'nope'" in said[0].getMessage()
    assert "Traceback" not in caplog.text
    assert outcome == "cut_short"
    assert (run.status, run.steps_recorded) == ("cut_short", 0)
    [cut] = [e for e in events if e.name == "Run.CutShort"]
    assert (cut.payload.cause, cut.payload.detail) == (
        "our_error", "UnknownModelError: no built-in agent or line-up model named 'nope'")
    assert not [e for e in events if e.name == "Run.Started"]
