"""An audit file whose hashes chain but whose fields are of the wrong type (a tool that wrote it by hand, or a
forger who resealed it) is refused in one line naming the file, the line and the field's path, never with a
traceback; a header naming a week past what a date can hold is refused the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from record_builders import WEEK, StepClock, point_the_cli_at, write_week

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from domain.eventlog.commands import PublishWeek
from domain.projections.canonical import canonical_struct_bytes, sha256_hex
from domain.week.audit import GENESIS
from domain.week.publishing import publish_week
from ops.cli import main


@pytest.fixture
def exported(settings, monkeypatch, tmp_path) -> list[dict[str, Any]]:
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    write_week(record, {"a": 3, "b": 2})
    publish_week(record, ReadModels(settings, record), PublishWeek(week=WEEK, by="lead"))
    record.close()
    out = tmp_path / "week.jsonl"
    assert main(["audit", "export", "--week", WEEK, "--out", str(out)]) == 0
    return [json.loads(line) for line in out.read_bytes().splitlines()]


def resealed(lines: list[dict[str, Any]], path: Path) -> Path:
    """The lines with their hash chain recomputed, as a forger would: every line's prev and sha256 are right."""
    prev, out = GENESIS, []
    for line in lines:
        content = {k: v for k, v in line.items() if k != "sha256"} | {"prev": prev}
        prev = sha256_hex(canonical_struct_bytes(content))
        out.append(canonical_struct_bytes(content | {"sha256": prev}))
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def verify(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["audit", "verify", str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_the_resealed_file_unchanged_still_verifies(exported, tmp_path, capsys):
    capsys.readouterr()
    assert main(["audit", "verify", str(resealed(exported, tmp_path / "same.jsonl"))]) == 0


@pytest.mark.parametrize(("line", "field", "value", "path"), [
    (0, "position", "12", "`$.position`"),
    (0, "events", None, "`$.events`"),
    (2, "originator_version", "first", "`$.originator_version`"),
    (2, "time", 12, "`$.time`"),
    (2, "position", [1], "`$.position`"),
])
def test_a_field_of_the_wrong_type_is_named_by_file_line_and_path(exported, tmp_path, capsys, line, field, value,
                                                                  path):
    exported[line][field] = value
    file = resealed(exported, tmp_path / "typed.jsonl")
    err = verify(file, capsys)
    assert f"{file}: line {line + 1}: " in err and path in err, err


def test_a_missing_field_is_named(exported, tmp_path, capsys):
    del exported[0]["ranking_sha256"]
    err = verify(resealed(exported, tmp_path / "missing.jsonl"), capsys)
    assert "line 1: " in err and "ranking_sha256" in err, err


def test_a_payload_field_of_the_wrong_type_is_named_inside_the_payload(exported, tmp_path, capsys):
    number, line = next((i, e) for i, e in enumerate(exported) if e.get("type") == "Run.Scheduled")
    key = next(k for k, v in line["payload"].items() if isinstance(v, str))
    line["payload"][key] = 7
    err = verify(resealed(exported, tmp_path / "payload.jsonl"), capsys)
    assert f"line {number + 1}: " in err and f"`$.payload.{key}`" in err, err


@pytest.mark.parametrize("week", ["9999-W52", "0001-W01", "2026-W99"])
def test_a_header_naming_a_week_no_date_can_hold_is_refused(exported, tmp_path, capsys, week):
    exported[0]["week"] = week
    err = verify(resealed(exported, tmp_path / "far.jsonl"), capsys)
    assert "line 1: week: " in err and week in err, err
