"""Distributed: `week run` enqueues on a real Redis, a real `canitbuy worker` process executes on the real lab
and writes to PostgreSQL; the command waits, reading progress from the event log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, LocalLab, start_worker, stop_worker, worker_env

from adapters.settings import Settings
from adapters.wiring import build_runtime

pytestmark = [pytest.mark.chromium, pytest.mark.postgres, pytest.mark.redis]


def test_week_run_through_an_arq_worker_process(
    local_lab: LocalLab, postgres_url: str, redis_url: str, tmp_path: Path
) -> None:
    build_runtime(Settings(data_dir=tmp_path / "setup", database_url=postgres_url)).close()  # as a deploy would
    env = worker_env(local_lab, database_url=postgres_url, redis_url=redis_url, data_dir=tmp_path / "worker")
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        cli_env = {**env, "CANITBUY_DATA_DIR": str(tmp_path / "cli")}
        done = subprocess.run(
            [sys.executable, "-m", "ops.cli", "week", "run", "--models", "baseline-robust",
             "--stations", "s01,s12,s13", "--publish", "--json"],
            env=cli_env, cwd=REPO, capture_output=True, text=True, timeout=300,
        )
    finally:
        stop_worker(worker)
    assert done.returncode == 0, done.stderr + (tmp_path / "worker.log").read_text()[-3000:]
    out = json.loads(done.stdout)
    assert [r["station"] for r in out["runs"]][0] == "s01"
    assert {r["station"]: r["status"] for r in out["runs"] if r["attempt"] == 1} == {
        "s01": "finished", "s12": out["runs"][1]["status"], "s13": "finished"}
    assert out["published"] is not None
    with build_runtime(Settings(data_dir=tmp_path / "check", database_url=postgres_url)) as runtime:
        started = [e.payload.worker for e in runtime.record.read_log(limit=10_000) if e.name == "Run.Started"]
    assert started and all(w.endswith(f":{worker.pid}") for w in started), "the worker process executed them"
    assert os.getpid() != worker.pid
