"""A worker whose runs the lab could not verify never runs (issue #10, point 5): the reason is ours, in one line.

The lab fetches the key directory a signature names: https, or plain http from loopback when it trusts local
directories. Without one it can reach, every run would meet s13's bot gate unsigned, which is our configuration.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.botauth import b64url, directory_app, load_or_create_key, signing_problem
from tests.integration.agent.conftest import ThreadedApp

ROOT = Path(__file__).parents[3]
REDIS = "redis://127.0.0.1:6379/14"


def canitbuy(*args: str, data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_") and k != "AI_GATEWAY_API_KEY"}
    clean.update({"CANITBUY_DATA_DIR": str(data_dir), "CANITBUY_REDIS_URL": REDIS, **env})
    return subprocess.run([sys.executable, "-m", "ops.cli", *args], cwd=ROOT, env=clean, capture_output=True,
                          text=True, timeout=120)


def test_which_configurations_the_lab_can_verify() -> None:
    assert signing_problem(None, None) is None, "the in-process lab serves and trusts a local directory"
    assert signing_problem("https://lab.canitbuy.com", "https://canitbuy.com") is None
    assert signing_problem("http://127.0.0.1:8700", "http://127.0.0.1:8701") is None, "both on this machine"
    assert "is not set" in (signing_problem("https://lab.canitbuy.com", None) or "")
    assert "must be https" in (signing_problem("https://lab.canitbuy.com", "http://127.0.0.1:8701") or "")
    assert "must be https" in (signing_problem("http://127.0.0.1:8700", "http://agent.example") or "")


@pytest.mark.parametrize(("directory", "words"), [
    (None, "CANITBUY_AGENT_DIRECTORY_URL is not set"),
    ("http://127.0.0.1:8701", "must be https"),
])
def test_a_worker_that_cannot_sign_refuses_to_start_in_one_line(tmp_path: Path, directory: str | None,
                                                                 words: str) -> None:
    env = {"CANITBUY_LAB_URL": "https://lab.canitbuy.example"}
    if directory:
        env["CANITBUY_AGENT_DIRECTORY_URL"] = directory
    done = canitbuy("worker", "--burst", data_dir=tmp_path, **env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "cannot sign runs" in done.stderr and words in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.chromium
def test_worker_check_fails_signing_unless_our_directory_serves_our_key(tmp_path: Path) -> None:
    ours = load_or_create_key(None, tmp_path / "ours")
    seed = b64url(ours.private_bytes_raw())
    other = load_or_create_key(None, tmp_path / "other")
    lab = "http://127.0.0.1:8700"
    with ThreadedApp(directory_app(ours)) as good, ThreadedApp(directory_app(other)) as wrong:
        fine = canitbuy("worker", "--check", data_dir=tmp_path / "a", CANITBUY_LAB_URL=lab,
                        CANITBUY_AGENT_DIRECTORY_URL=good.url, CANITBUY_AGENT_SIGNING_KEY=seed)
        stranger = canitbuy("worker", "--check", data_dir=tmp_path / "b", CANITBUY_LAB_URL=lab,
                            CANITBUY_AGENT_DIRECTORY_URL=wrong.url, CANITBUY_AGENT_SIGNING_KEY=seed)
    unset = canitbuy("worker", "--check", data_dir=tmp_path / "c", CANITBUY_LAB_URL="https://lab.canitbuy.example",
                     CANITBUY_AGENT_SIGNING_KEY=seed)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert "ok    signing: " in fine.stdout and "serves our key" in fine.stdout
    assert stranger.returncode == 1 and "FAIL  signing: " in stranger.stdout
    assert "does not serve our key" in stranger.stdout
    assert unset.returncode == 1 and "FAIL  signing: " in unset.stdout and "is not set" in unset.stdout
