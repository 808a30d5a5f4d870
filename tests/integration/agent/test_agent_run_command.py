"""`canitbuy run` end to end, as a user runs it: its own process, a lab started in it, the run recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.chromium
ROOT = Path(__file__).parents[3]


def test_run_prints_one_json_object_for_a_recorded_run(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    env["CANITBUY_DATA_DIR"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "ops.cli", "run", "--station", "s05", "--model", "baseline-robust",
                           "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passed"] is True and result["outcome"] == "passed" and result["station"] == "s05"
    assert result["steps"] == 4 and result["seconds"] > 0 and result["run_id"]
    assert any((tmp_path / "blobs").rglob("*"))  # the screenshots went to the blob store
