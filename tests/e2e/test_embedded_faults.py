"""The actor in-process on SQLite, on the real lab and Chromium: idempotence, and each fault really caused."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from uuid import UUID

import anyio
import pytest
from conftest import LocalLab, kill_chromium

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from workers.executor import execute_run
from workers.leases import SqlLeaseStore, open_leases
from workers.ledger import RunLedger
from workers.plan import schedule_course
from workers.pool import EmbeddedPool
from workers.reaper import reap
from workers.resources import Resources, build_resources

pytestmark = pytest.mark.chromium
WEEK = "2026-W48"


@pytest.fixture
def runtime(local_lab: LocalLab, tmp_path: Path) -> Iterator[Runtime]:
    with build_runtime(local_lab.settings(tmp_path / "var")) as rt:
        yield rt


def resources_for(runtime: Runtime, local_lab: LocalLab, lease_seconds: float = 30,
                  leases: SqlLeaseStore | None = None) -> Resources:
    return build_resources(runtime, leases or open_leases(runtime.settings), lab_url=local_lab.services.lab_url,
                           directory_url=None, lease_seconds=lease_seconds)


def started_with_lapsed_lease(runtime: Runtime, holder: str) -> tuple[UUID, SqlLeaseStore]:
    """An s01 run started by `holder`, whose lease (0.2 s) has lapsed."""
    (run_id,) = schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test", stations=["s01"])
    leases = open_leases(runtime.settings)
    leases.acquire(str(run_id), holder, 0.2)
    runtime.record.start_run(run_id, worker=holder, browser_version="-", agent_version="-")
    time.sleep(0.4)
    return run_id, leases


async def execute(res: Resources, *run_ids: UUID) -> list[str]:
    try:
        results = await EmbeddedPool(res, 2).run([str(r) for r in run_ids])
    finally:
        await res.aclose()
    return [results[str(r)] for r in run_ids]


def test_a_run_executes_once_however_often_it_is_delivered(runtime: Runtime, local_lab: LocalLab) -> None:
    (run_id,) = schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test", stations=["s01"])

    async def twice() -> list[str]:
        res = resources_for(runtime, local_lab)
        try:
            first = await execute_run({"resources": res}, str(run_id))
            second = await execute_run({"resources": res}, str(run_id))
        finally:
            await res.aclose()
        return [first, second]

    assert anyio.run(twice) == ["passed", "skipped: finished"]
    run = runtime.record.get_run(run_id)
    assert run.status == "finished" and run.steps_recorded >= 3


def test_a_run_delivered_again_while_it_executes_is_skipped_not_cut_short(
    runtime: Runtime, local_lab: LocalLab
) -> None:
    (run_id,) = schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test", stations=["s01"])

    async def at_once() -> list[str]:
        res = resources_for(runtime, local_lab)
        try:
            return list(await asyncio.gather(execute_run({"resources": res}, str(run_id)),
                                             execute_run({"resources": res}, str(run_id))))
        finally:
            await res.aclose()

    assert sorted(anyio.run(at_once)) == ["passed", "skipped: executing here"]
    run = runtime.record.get_run(run_id)
    assert run.status == "finished" and run.attempt == 1


def test_a_run_leased_by_another_worker_is_left_alone(runtime: Runtime, local_lab: LocalLab) -> None:
    (run_id,) = schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test", stations=["s01"])
    open_leases(runtime.settings).acquire(str(run_id), "elsewhere:1", 30)
    assert anyio.run(execute, resources_for(runtime, local_lab), run_id) == ["skipped: leased elsewhere"]
    assert runtime.record.get_run(run_id).status == "scheduled"


def test_a_lapsed_lease_cuts_the_run_short_as_our_error(runtime: Runtime) -> None:
    run_id, leases = started_with_lapsed_lease(runtime, "killed:1")
    assert reap(runtime, leases) == [str(run_id)]
    assert reap(runtime, leases) == []
    run = runtime.record.get_run(run_id)
    assert run.status == "cut_short"
    cut = [e for e in runtime.record.read_log(limit=10_000) if e.name == "Run.CutShort"]
    assert [e.payload.cause for e in cut] == ["our_error"]


def test_a_worker_never_reaps_the_run_it_is_executing_when_its_renewal_is_late(runtime: Runtime) -> None:
    run_id, leases = started_with_lapsed_lease(runtime, "here:1")
    assert reap(runtime, leases, holder="here:1", executing={str(run_id)}) == []
    assert runtime.record.get_run(run_id).status == "running"
    assert leases.renew(str(run_id), "here:1", 30), "the late renewal restores the lease"
    assert reap(runtime, leases) == [], "renewed, it is no longer lapsed for anyone"
    leases.acquire(str(run_id), "here:1", 0.2)
    time.sleep(0.4)
    assert reap(runtime, leases, holder="elsewhere:2", executing={str(run_id)}) == [str(run_id)], \
        "another worker cannot tell a late heartbeat from a dead one"


def test_a_run_whose_renewals_are_always_late_still_finishes_in_its_own_worker(
    runtime: Runtime, local_lab: LocalLab
) -> None:
    """The lease's clock runs 20 times as fast as the worker's: each 1 s lease has lapsed long before its renewal
    (every third of a second of the worker's time) and the worker's reaper (every second) finds it lapsed, as a
    loaded machine makes a short lease lapse. The run is this worker's own, so it finishes."""
    from workers.arq_app import _reap_forever

    (run_id,) = schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test", stations=["s01"])
    began = time.time()
    leases = open_leases(runtime.settings, clock=lambda: began + (time.time() - began) * 20)

    async def go() -> str:
        res = resources_for(runtime, local_lab, lease_seconds=1.0, leases=leases)
        reaper = asyncio.ensure_future(_reap_forever(res))
        try:
            return await execute_run({"resources": res}, str(run_id))
        finally:
            reaper.cancel()
            await res.aclose()

    assert anyio.run(go) == "passed"
    assert runtime.record.get_run(run_id).status == "finished"


def test_a_browser_crash_is_our_error_and_the_next_run_gets_a_new_browser(
    runtime: Runtime, local_lab: LocalLab
) -> None:
    first, second = schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test", stations=["s01", "s13"])
    res = resources_for(runtime, local_lab)
    ledger = RunLedger(runtime.record)

    async def crash_then_continue() -> list[str]:
        async with anyio.create_task_group() as group:
            outcome: list[str] = []

            async def run_first() -> None:
                outcome.append(await execute_run({"resources": res}, str(first)))

            group.start_soon(run_first)
            while getattr(ledger.refresh().get(str(first)), "steps", 0) < 1:
                await anyio.sleep(0.1)
            assert kill_chromium(os.getpid()) >= 1, "Chromium is a child of this process"
        outcome.append(await execute_run({"resources": res}, str(second)))
        await res.aclose()
        return outcome

    assert anyio.run(crash_then_continue) == ["cut_short", "passed"]
    cut = [e for e in runtime.record.read_log(limit=10_000) if e.name == "Run.CutShort"]
    assert [(e.originator_id, e.payload.cause) for e in cut] == [(str(first), "our_error")]


class _ModelServer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_model_endpoint_that_is_down_cuts_the_run_short_for_model_connection(
    local_lab: LocalLab, tmp_path: Path
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ModelServer)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.server_close()  # the endpoint existed and is now stopped: connections are refused
    settings: Settings = local_lab.settings(tmp_path / "var", model_base_url=url, model_api_key="test-key")
    with build_runtime(settings) as runtime:
        (run_id,) = schedule_course(runtime, WEEK, ["gpt-6-luna"], requested_by="test", stations=["s01"])
        assert anyio.run(execute, resources_for(runtime, local_lab), run_id) == ["cut_short"]
        cut = [e for e in runtime.record.read_log(limit=10_000) if e.name == "Run.CutShort"]
        assert [e.payload.cause for e in cut] == ["model_connection"]
