"""`canitbuy week run` on a fresh checkout with nothing configured: SQLite, the in-process pool, a lab started
in-process, the built-in agents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from domain.week.weeks import week_of

pytestmark = pytest.mark.chromium


def canitbuy(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_") and k != "AI_GATEWAY_API_KEY"}
    env["CANITBUY_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "ops.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).resolve().parents[2])


def test_week_run_publishes_with_the_built_in_agents_and_is_idempotent(tmp_path: Path) -> None:
    args = ("week", "run", "--models", "baseline-robust,baseline-naive",
            "--stations", "s01,s13", "--concurrency", "2", "--publish", "--json")
    first = canitbuy(*args, data_dir=tmp_path)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["week"] == week_of(datetime.now(UTC)) and out["published"]["position"] > 0
    assert out["published"]["provisional"], "the week is in progress: its close supersedes this publication"
    assert [(r["model"], r["station"]) for r in out["runs"][:2]] == [
        ("baseline-robust", "s01"), ("baseline-naive", "s01")], "the control first for each model"
    assert {r["status"] for r in out["runs"]} == {"finished"}
    robust = {r["station"]: r["passed"] for r in out["runs"] if r["model"] == "baseline-robust"}
    assert robust == {"s01": True, "s13": True}, "signed, the robust agent passes the bot gate"
    ranking = {e["model"]: e for e in out["ranking"]}
    assert set(ranking) == {"baseline-robust", "baseline-naive"}
    assert ranking["baseline-robust"]["passed"] == 1 and ranking["baseline-robust"]["place"] is None, \
        "a partial course ranks no model"

    again = canitbuy(*args[:-2], data_dir=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "4 runs, " in again.stdout and "baseline-robust" in again.stdout
    assert "runs 4/4" in again.stdout, "nothing runs twice: the runs are found, already finished"
