"""The same mistake typed into any command gets the same answer: a malformed or out-of-range value on the command
line is a usage error (exit 2, one line naming the option), whatever the command; what only the record or the
world can refuse (a week not published, a service that does not answer) is a failure (exit 1).

Before, `--week 2026-W99` was exit 2 in `week run` but 1 in `week show`, `week publish` and `audit export`; an
unknown model was 1 in `run` and 2 in `models check`; a lab address with no such port was accepted and every run
cut short; an ARC row on port 99999 recorded a batch that then crashed unfinished. Each case runs the command as
a user types it, in its own process against a fresh store.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def canitbuy(args: list[str], data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_") and k != "AI_GATEWAY_API_KEY"}
    clean.update({"CANITBUY_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO), **env})
    return subprocess.run([sys.executable, "-m", "ops.cli", *args], cwd=data_dir, env=clean, capture_output=True,
                          text=True, timeout=120)


def one_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("canitbuy"), line
    return line


WEEK_OPTIONS = [
    ["week", "run", "--week"],
    ["week", "show", "--week"],
    ["week", "publish", "--by", "staff@example.org", "--week"],
    ["audit", "export", "--out", "x.jsonl", "--week"],
    ["audit", "replay", "--week"],
    ["dataset", "export", "--week"],
]


@pytest.mark.parametrize("bad", ["2026-W99", "W48", "last week", "2026-W²"])
def test_a_malformed_week_is_a_usage_error_in_every_command_that_takes_one(bad: str, tmp_path: Path) -> None:
    said = set()
    for command in WEEK_OPTIONS:
        line = one_line(canitbuy([*command, bad], tmp_path), 2)
        assert "argument --week" in line and f"see canitbuy {' '.join(command[:2])} --help" in line, line
        said.add(line.split("argument --week: ", 1)[1].split(" (see ")[0])
    assert len(said) == 1, f"one mistake, one explanation: {said}"
    assert not (tmp_path / "canitbuy.sqlite3").exists() or _events(tmp_path) == 0, "nothing was recorded"


CASES = {
    "an unknown station": (["run", "--station", "s99", "--model", "baseline-robust"], "--station", "s99"),
    "an unknown model in run": (["run", "--station", "s01", "--model", "gpt-0"], "--model", "gpt-0"),
    "an unknown model in week run": (["week", "run", "--models", "baseline-robust,gpt-0"], "--models", "gpt-0"),
    "an unknown model in arc run": (["arc", "run", "--test-set", "canitbuy-course-2.1.csv", "--model", "gpt-0"],
                                    "--model", "gpt-0"),
    "a model not in the line-up": (["models", "check", "--model", "gpt-0"], "--model", "gpt-0"),
    "an unknown station in a subset": (["week", "run", "--stations", "s01,s19"], "--stations", "s19"),
    "no repeats": (["week", "run", "--repeats", "0"], "--repeats", "1 to 20"),
    "too many repeats": (["week", "run", "--repeats", "21"], "--repeats", "1 to 20"),
    "a superscript for repeats": (["week", "run", "--repeats", "²"], "--repeats", "1 to 20"),
    "no concurrency": (["week", "run", "--concurrency", "0"], "--concurrency", "1 to 64"),
    "publication zero": (["audit", "export", "--week", "2026-W48", "--out", "x", "--publication", "0"],
                         "--publication", "from 1"),
    "a time that is not one": (["week", "schedule", "--now", "yesterday"], "--now", "ISO 8601"),
    "a timeout that is not a number": (["models", "check", "--timeout", "nan"], "--timeout", "seconds"),
    "a lease that is not positive": (["worker", "--lease-seconds", "-5"], "--lease-seconds", "seconds above 0"),
    "a lease that is not a number": (["worker", "--lease-seconds", "nan"], "--lease-seconds", "seconds above 0"),
    "a batch id that is not one": (["arc", "export", "not-a-batch"], "BATCH", "UUID"),
    "evidence on plain http": (["arc", "export", "00000000-0000-0000-0000-000000000001", "--public-url",
                                "http://canitbuy.example"], "--public-url", "https://"),
    "a lab address with no such port": (["run", "--station", "s01", "--model", "baseline-robust", "--lab-url",
                                         "http://127.0.0.1:99999"], "--lab-url", "Port out of range"),
    "a lab address cut off": (["run", "--station", "s01", "--model", "baseline-robust", "--lab-url",
                               "http://[::1"], "--lab-url", "not an address"),
    "a lab address of another scheme": (["arc", "run", "--test-set", "canitbuy-course-2.1.csv", "--model",
                                         "baseline-robust", "--lab-url", "ftp://lab"], "--lab-url", "http://"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_bad_value_is_a_usage_error_naming_its_option(case: str, tmp_path: Path) -> None:
    args, option, detail = CASES[case]
    line = one_line(canitbuy(args, tmp_path), 2)
    assert f"argument {option}:" in line and detail in line, line
    assert not (tmp_path / "canitbuy.sqlite3").exists() or _events(tmp_path) == 0, "nothing was recorded"


@pytest.mark.parametrize("address", ["http://127.0.0.1:99999", "http://[::1", "lab.localhost:8700"])
def test_a_bad_lab_address_in_the_environment_fails_before_any_run_is_scheduled(address: str,
                                                                               tmp_path: Path) -> None:
    done = canitbuy(["week", "run", "--models", "baseline-robust", "--stations", "s01"], tmp_path,
                    CANITBUY_LAB_URL=address)
    line = one_line(done, 1)
    assert "CANITBUY_LAB_URL" in line and address in line, line
    assert not (tmp_path / "canitbuy.sqlite3").exists() or _events(tmp_path) == 0, "no run was scheduled"


def test_an_arc_row_on_a_port_that_does_not_exist_is_refused_before_the_batch_is_recorded(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("id,host,product_url\nok-1,example.com,https://example.com/shoe\n"
                    "far-2,example.com,http://example.com:99999/shoe\n")
    done = canitbuy(["arc", "run", "--test-set", str(rows), "--model", "baseline-robust"], tmp_path)
    line = one_line(done, 1)
    assert "row 3" in line and "99999" in line and "product_url" in line, line
    assert "recorded" not in done.stderr
    assert not (tmp_path / "canitbuy.sqlite3").exists() or _events(tmp_path) == 0, "no batch was recorded"


def _events(data_dir: Path) -> int:
    """How many events the embedded store holds (its one table of stored events)."""
    with sqlite3.connect(data_dir / "canitbuy.sqlite3") as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return sum(db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]  # noqa: S608 - names from the file
                   for t in tables if t.endswith("events"))
