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


def test_a_reader_run_records_every_page_fetched_and_each_fact_graded(tmp_path: Path) -> None:
    import warnings
    from uuid import UUID

    from adapters.settings import Settings
    from adapters.wiring import build_runtime
    from web.app import create_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    env["CANITBUY_DATA_DIR"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "ops.cli", "run", "--station", "s12", "--model", "baseline-robust",
                           "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    settings = Settings(data_dir=tmp_path, site_secret="test secret " * 4)
    with build_runtime(settings) as runtime:
        verdict = runtime.record.get_run(UUID(run_id)).verdict
    assert verdict is not None and verdict.passed
    assert [g.fact for g in verdict.facts] == ["price_cents", "eu42_available", "eu44_available", "delivery_cents",
                                               "return_days"]
    assert all(g.right for g in verdict.facts) and verdict.facts_right == 5
    assert verdict.pages and all(len(p.sha256 or "") == 64 for p in verdict.pages if p.status is not None)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        page = client.get(f"/runs/{run_id}").text
        recording = client.get(f"/api/runs/{run_id}.json").json()
        run_schema = client.get("/api/schemas/run.json").json()
    import jsonschema

    jsonschema.validate(recording, run_schema)
    assert {"facts", "pages"} <= set(run_schema["$defs"]["Verdict"]["properties"])
    assert "The five facts, graded" in page and page.count("✓ </span>right") == 5
    assert "Every page the reader fetched" in page and verdict.pages[0].url in page and verdict.pages[0].sha256 in page
    assert recording["verdict"]["pages"][0]["sha256"] == verdict.pages[0].sha256
    assert recording["verdict"]["facts"][0] == {"fact": "price_cents", "given": 13900, "expected": 13900,
                                                "right": True}
