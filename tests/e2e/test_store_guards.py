"""Commands that must not harm the store they read, nor report on a store that is not there: each runs the command
as a user types it, in its own process, against a fresh data folder.

Before, `audit export --out <data>/canitbuy.sqlite3` opened the event store's database for writing before reading
the week's events (the store was left at 0 bytes), and `audit verify ""` said `.: is a directory`.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def canitbuy(args: list[str], data_dir: Path, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_") and k != "AI_GATEWAY_API_KEY"}
    clean.update({"CANITBUY_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO)})
    return subprocess.run(
        [sys.executable, "-m", "ops.cli", *args],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
    )


def one_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("canitbuy"), line
    return line


def test_audit_export_refuses_to_write_into_the_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    canitbuy(["week", "show", "--week", "2026-W50"], data, tmp_path)  # opens (makes) the store
    database = data / "canitbuy.sqlite3"
    before = database.read_bytes()
    for out in (database, data / "week.jsonl", data / "blobs" / ".." / "canitbuy.sqlite3"):
        line = one_line(canitbuy(["audit", "export", "--week", "2026-W50", "--out", str(out)], data, tmp_path), 2)
        assert "inside the data folder" in line, line
    assert database.read_bytes() == before, "the store's database is as it was"
    assert not (data / "week.jsonl").exists()


def test_an_empty_path_is_said_to_be_empty(tmp_path: Path) -> None:
    for args in (["audit", "verify", ""], ["audit", "export", "--week", "2026-W50", "--out", ""]):
        line = one_line(canitbuy(args, tmp_path / "data", tmp_path), 2)
        assert "the path is empty" in line, line


def test_check_makes_no_store_and_says_there_is_none(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-data"
    line = one_line(canitbuy(["check"], missing, tmp_path), 1)
    assert "no data folder" in line, line
    assert not missing.exists(), "check made nothing"
    (tmp_path / "empty").mkdir()
    line = one_line(canitbuy(["check"], tmp_path / "empty", tmp_path), 1)
    assert "no event store" in line, line
    assert list((tmp_path / "empty").iterdir()) == []
    emptied = tmp_path / "emptied"
    emptied.mkdir()
    (emptied / "canitbuy.sqlite3").write_bytes(b"")
    line = one_line(canitbuy(["check"], emptied, tmp_path), 1)
    assert "is empty" in line, line


def test_check_fails_when_the_read_models_are_ahead_of_the_log(tmp_path: Path) -> None:
    longer, shorter = tmp_path / "longer", tmp_path / "shorter"
    scheduled = canitbuy(["week", "schedule", "--no-execute"], longer, tmp_path)  # this week's line-up runs
    assert scheduled.returncode == 0, scheduled.stderr
    assert canitbuy(["db", "catch-up"], longer, tmp_path).returncode == 0
    canitbuy(["week", "show", "--week", "2026-W50"], shorter, tmp_path)  # a fresh store: a shorter log
    for stale in shorter.glob("readmodels.sqlite3*"):
        stale.unlink()
    for file in longer.glob("readmodels.sqlite3*"):  # with its write-ahead log, if it has one
        (shorter / file.name).write_bytes(file.read_bytes())
    line = one_line(canitbuy(["check", "--no-blobs"], shorter, tmp_path), 1)
    assert "read models are at log position" in line and "the log ends at" in line, line


REGISTER_ACME = (
    "from adapters.settings import Settings; from adapters.wiring import build_runtime\n"
    "with build_runtime(Settings.from_env()) as runtime:\n"
    "    runtime.record.register_organisation(slug='acme', name='Acme', by='staff@example.org')\n"
)


def _events(data: Path) -> list[str]:
    with sqlite3.connect(data / "canitbuy.sqlite3") as db:
        return [str(row[0]) for row in db.execute("SELECT topic FROM stored_events ORDER BY rowid")]


def test_staff_add_checks_everything_before_it_records_anything(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "CANITBUY_DATA_DIR": str(data), "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", REGISTER_ACME], env=env, check=True, cwd=tmp_path, timeout=120)
    before = _events(data)
    member = ["staff", "add", "mem@example.org", "--role", "member", "--org", "acme", "--password-stdin"]
    assert "at least 12 characters" in one_line(canitbuy(member, data, tmp_path, "short\n"), 1)
    binary = subprocess.run(
        [sys.executable, "-m", "ops.cli", *member],
        env=env,
        cwd=tmp_path,
        input=b"\xff\xfe a long password\n",
        capture_output=True,
        timeout=120,
    )
    assert binary.returncode == 1 and b"Traceback" not in binary.stderr and b"not text" in binary.stderr
    for email, said in ((f"{'a' * 300}@example.org", "longer than"), ("m\x01m@example.org", "control character")):
        done = canitbuy(["staff", "add", email, *member[3:]], data, tmp_path, "a long password 1\n")
        assert said in one_line(done, 1)
    done = canitbuy([*member, "--replace"], data, tmp_path, "a long password 1\n")
    assert "no account mem@example.org to replace" in one_line(done, 1)
    assert _events(data) == before, "nothing was recorded (no Organisation.MemberAdded)"
    made = canitbuy(member, data, tmp_path, "a long password 1\n")
    assert made.returncode == 0 and "made" in made.stdout, made.stderr
    assert len(_events(data)) == len(before) + 1


def test_week_schedule_refuses_a_now_in_a_week_not_begun(tmp_path: Path) -> None:
    data = tmp_path / "data"
    canitbuy(["week", "show", "--week", "2026-W50"], data, tmp_path)  # opens (makes) the store
    before = _events(data)
    for now, said in (("2030-01-01T00:00Z", "has not begun"), ("9999-12-31", "outside the years")):
        line = one_line(canitbuy(["week", "schedule", "--now", now, "--no-execute"], data, tmp_path), 2)
        assert line.startswith("canitbuy: --now ") and said in line, line
    assert _events(data) == before, "no run was scheduled"


def test_week_publish_refuses_a_blank_publisher(tmp_path: Path) -> None:
    for blank in ("", "  ", "\t"):
        line = one_line(canitbuy(["week", "publish", "--week", "2026-W50", "--by", blank], tmp_path / "d", tmp_path), 2)
        assert "argument --by" in line and "blank" in line, line
    assert not (tmp_path / "d").exists(), "nothing was opened, let alone published"
