"""Faults really caused on the distributed path: a worker killed mid-run, Redis restarting with jobs queued,
PostgreSQL restarting during a run. These restart servers other suites share: they run last, and briefly."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest
import redis
from conftest import LocalLab, start_worker, stop_worker, worker_env

from adapters.readmodels import ReadModels
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.projections.facts import RunFact
from domain.week.weeks import week_of
from workers.arq_app import QUEUE, enqueue_runs, queue_pool, requeue_open_runs
from workers.ledger import RunLedger
from workers.plan import schedule_course, schedule_repeats

pytestmark = [pytest.mark.disruptive, pytest.mark.chromium, pytest.mark.postgres, pytest.mark.redis]
WEEK = week_of(datetime.now(UTC))
"""The week in progress: a run counts for the week in which it starts, and these runs start now."""
REDIS_START = ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379",
               "--save", "", "--appendonly", "no"]


@pytest.fixture
def runtime(postgres_url: str, tmp_path: Path) -> Iterator[Runtime]:
    with build_runtime(Settings(data_dir=tmp_path / "test", database_url=postgres_url)) as rt:
        yield rt


def settings_for(runtime: Runtime, redis_url: str) -> Settings:
    return Settings(data_dir=runtime.settings.data_dir, database_url=runtime.settings.database_url,
                    redis_url=redis_url)


def enqueue(runtime: Runtime, redis_url: str, run_ids: list[str]) -> None:
    async def go() -> None:
        pool = await queue_pool(settings_for(runtime, redis_url))
        await enqueue_runs(pool, run_ids)
        await pool.aclose()

    anyio.run(go)


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


def events(runtime: Runtime, name: str, run_id: str | None = None) -> list[object]:
    return [e for e in runtime.record.read_log(limit=100_000)
            if e.name == name and (run_id is None or e.originator_id == run_id)]


def test_a_worker_killed_mid_run_is_cut_short_repeated_and_counted_once(
    runtime: Runtime, local_lab: LocalLab, redis_url: str, tmp_path: Path
) -> None:
    env = worker_env(local_lab, database_url=runtime.settings.database_url or "", redis_url=redis_url,
                     data_dir=tmp_path / "workers")
    (run_id,) = [str(i) for i in schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test",
                                                  stations=["s01"])]
    ledger = RunLedger(runtime.record)
    doomed = start_worker(env, tmp_path / "doomed.log", lease_seconds=3)
    enqueue(runtime, redis_url, [run_id])
    wait_for(lambda: getattr(ledger.refresh().get(run_id), "steps", 0) >= 1, 120, "the first step")
    os.killpg(doomed.pid, signal.SIGKILL)
    doomed.wait()
    survivor = start_worker(env, tmp_path / "survivor.log", lease_seconds=3)
    try:
        wait_for(lambda: ledger.refresh().runs[run_id].status == "cut_short", 60, "the reaper")
        assert ledger.runs[run_id].cut_short_cause == "our_error"
        (repeat,) = [str(i) for i in schedule_repeats(runtime, ledger, WEEK, requested_by="scheduler")]
        enqueue(runtime, redis_url, [repeat])
        wait_for(lambda: ledger.refresh().runs[repeat].is_over, 120, "the repeat")
    finally:
        stop_worker(survivor)
    assert ledger.runs[repeat].status == "finished" and ledger.runs[repeat].attempt == 2
    assert len(events(runtime, "Run.Finished")) == 1, "the half run never finished, the repeat did once"
    readmodels = ReadModels(runtime.settings, runtime.record)
    readmodels.catch_up()
    import json

    (entry,) = json.loads(readmodels.week_documents(WEEK).ranking)["entries"]
    assert entry["control_passed"] is True


def test_runs_queued_when_redis_restarts_are_found_again_in_the_log(
    runtime: Runtime, local_lab: LocalLab, redis_url: str, tmp_path: Path
) -> None:
    run_ids = [str(i) for i in schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test",
                                               stations=["s01", "s13"])]
    enqueue(runtime, redis_url, run_ids)
    client = redis.Redis.from_url(redis_url)
    assert client.zcard(QUEUE) == 2
    subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", "6379", "shutdown", "nosave"], check=False)
    subprocess.run(REDIS_START, check=True)
    wait_for(lambda: _pings(client), 20, "Redis to come back")
    assert client.zcard(QUEUE) == 0, "the restart lost the queue"

    async def requeue() -> int:
        pool = await queue_pool(settings_for(runtime, redis_url))
        try:
            return await requeue_open_runs(RunLedger(runtime.record), pool)
        finally:
            await pool.aclose()

    assert anyio.run(requeue) == 2
    assert anyio.run(requeue) == 0, "requeueing again doubles nothing"
    env = worker_env(local_lab, database_url=runtime.settings.database_url or "", redis_url=redis_url,
                     data_dir=tmp_path / "workers")
    worker = start_worker(env, tmp_path / "worker.log")
    ledger = RunLedger(runtime.record)
    try:
        wait_for(lambda: all(s.is_over for s in ledger.refresh().of(run_ids)), 180, "both runs")
    finally:
        stop_worker(worker)
    runs = ledger.of(run_ids)
    assert [s.status for s in runs] == ["finished", "finished"], _why(runs, tmp_path / "worker.log")
    assert len(events(runtime, "Run.Started")) == 2


def _why(runs: list[RunFact], log: Path) -> str:
    """What a failure here needs to be understood from CI's output alone: each run's cause and the worker's log."""
    causes = "; ".join(f"{r.status} ({r.cut_short_cause}: {r.cut_short_detail})" for r in runs)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:]) if log.exists() else "(no log)"
    return f"{causes}\nthe worker's log, last lines:\n{tail}"


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def test_postgresql_restarting_during_a_run_loses_and_duplicates_no_event(
    runtime: Runtime, local_lab: LocalLab, redis_url: str, tmp_path: Path
) -> None:
    (run_id,) = [str(i) for i in schedule_course(runtime, WEEK, ["baseline-robust"], requested_by="test",
                                                  stations=["s01"])]
    env = worker_env(local_lab, database_url=runtime.settings.database_url or "", redis_url=redis_url,
                     data_dir=tmp_path / "workers")
    worker = start_worker(env, tmp_path / "worker.log", lease_seconds=30)
    ledger = RunLedger(runtime.record)
    try:
        enqueue(runtime, redis_url, [run_id])
        wait_for(lambda: getattr(ledger.refresh().get(run_id), "steps", 0) >= 1, 120, "the first step")
        version = sorted(os.listdir("/etc/postgresql"))[0]
        subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"], check=True)
        wait_for(lambda: _refreshes(ledger) and ledger.runs[run_id].is_over, 180, "the run to end")
    finally:
        stop_worker(worker)
    log = (tmp_path / "worker.log").read_text()
    assert ledger.runs[run_id].status == "finished", log[-3000:]
    steps = [e.payload.step.number for e in events(runtime, "Run.StepRecorded", run_id)]
    assert steps == list(range(1, len(steps) + 1)), "each step stored once, in order"
    assert len(events(runtime, "Run.Finished", run_id)) == 1


def _refreshes(ledger: RunLedger) -> bool:
    try:
        ledger.refresh()
        return True
    except Exception:  # noqa: BLE001 - the database is restarting
        return False
