"""Publish a week, export its audit file, verify it from the file alone; one flipped byte names its line."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from record_builders import WEEK, StepClock, point_the_cli_at, write_week

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from domain.eventlog.commands import LeaveModelOut, PublishWeek, SetRunOutcome
from domain.eventlog.handlers import issue_correction
from domain.projections.canonical import sha256_hex
from domain.week.audit import verify_lines
from domain.week.publishing import publish_week
from domain.week.weeks import week_end
from ops.cli import main


@pytest.fixture
def published(settings, monkeypatch, tmp_path):
    """A published week with a correction issued after publication; the CLI pointed at the same store."""
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    runs = write_week(record, {"a": 17, "b": 11, "c": 11})
    write_week(record, {"a": 2}, week="2026-W49")
    readmodels = ReadModels(settings, record)
    issue_correction(record, readmodels, SetRunOutcome(run_id=runs[20].id, outcome="passed", reason="judge bug",
                                                       public_text="b passed s03.", by="staff"))
    publication = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
    issue_correction(record, readmodels, LeaveModelOut(model="a", week=WEEK, reason="leak",
                                                       public_text="a saw the course.", by="staff"))
    record.close()
    return publication


def test_export_then_verify_passes(published, tmp_path, capsys):
    out = tmp_path / "week.jsonl"
    assert main(["audit", "export", "--week", WEEK, "--out", str(out)]) == 0
    lines = out.read_bytes().splitlines()
    header = json.loads(lines[0])
    assert (header["position"], header["ranking_sha256"]) == (published.position, published.ranking_sha256)
    types = {json.loads(line)["type"] for line in lines[1:]}
    # Run.Started too: documents format 4 counts the run that started last (earlier files leave starts out)
    assert types == {"CourseRelease.Released", "Run.Scheduled", "Run.Started", "Run.Finished", "Correction.Issued"}
    assert all(json.loads(line)["payload"].get("week") in (WEEK, None) for line in lines[1:])
    assert main(["audit", "verify", str(out), "--ranking-sha256", published.ranking_sha256,
                 "--matrix-sha256", published.matrix_sha256, "--events-sha256", published.events_sha256]) == 0
    assert "Equal to the values given: the ranking, Matrix and events sha256" in capsys.readouterr().out


def test_flipping_one_byte_makes_verify_name_the_line(published, tmp_path, capsys):
    out = tmp_path / "week.jsonl"
    main(["audit", "export", "--week", WEEK, "--out", str(out)])
    data = bytearray(out.read_bytes())
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    target = starts[6] + 40  # a byte inside line 7
    data[target] ^= 0x01
    out.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["audit", "verify", str(out)]) == 1
    assert "line 7" in capsys.readouterr().err


def test_a_dropped_line_breaks_the_chain(published, tmp_path, capsys):
    out = tmp_path / "week.jsonl"
    main(["audit", "export", "--week", WEEK, "--out", str(out)])
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:4] + lines[5:]))
    capsys.readouterr()
    assert main(["audit", "verify", str(out)]) == 1
    assert "line 5" in capsys.readouterr().err


def test_replay_prints_the_ranking_as_published_and_as_corrected(published, capsys):
    capsys.readouterr()
    assert main(["audit", "replay", "--week", WEEK, "--as-published"]) == 0
    as_published = json.loads(capsys.readouterr().out)
    assert main(["audit", "replay", "--week", WEEK, "--as-corrected"]) == 0
    as_corrected = json.loads(capsys.readouterr().out)
    assert as_published["position"] == published.position
    assert [e["model"] for e in as_published["entries"] if e["ranked"]] == ["a", "b", "c"]
    assert [e["model"] for e in as_corrected["entries"] if e["ranked"]] == ["b", "c"]


def test_unknown_weeks_are_one_line_errors(published, tmp_path, capsys):
    assert main(["audit", "export", "--week", "2026-W40", "--out", str(tmp_path / "x.jsonl")]) == 1
    assert main(["audit", "replay", "--week", "2026-W40"]) == 1
    assert main(["audit", "replay", "--week", "2026-W49"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "canitbuy: week 2026-W40 has not been published",
        "canitbuy: no results for week 2026-W40 in the record",
        "canitbuy: week 2026-W49 has not been published",
    ]
    assert main(["db", "rebuild"]) == 0 and main(["db", "migrate"]) == 0


def test_a_provisional_publication_exports_and_verifies_labelled(settings, monkeypatch, tmp_path, capsys):
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    write_week(record, {"a": 17, "b": 3})
    published = publish_week(record, ReadModels(settings, record), PublishWeek(week=WEEK, by="lead"))
    assert published.provisional  # the week runs on
    record.close()
    out = tmp_path / "week.jsonl"
    assert main(["audit", "export", "--week", WEEK, "--out", str(out)]) == 0
    assert json.loads(out.read_bytes().splitlines()[0])["provisional"] is True
    capsys.readouterr()
    assert main(["audit", "verify", str(out)]) == 0
    assert "2026-W48 at log position" in (said := capsys.readouterr().out) and "provisional publication" in said


def test_the_audit_file_cites_the_week_as_the_method_gives_it(published, tmp_path):
    out = tmp_path / "week.jsonl"
    assert main(["audit", "export", "--week", WEEK, "--out", str(out)]) == 0
    lines = out.read_bytes().splitlines()
    cited = json.loads(lines[0])["citation"]
    assert re.fullmatch(rf"CanItBuy AI agent ranking, canitbuy\.com/ranking, {WEEK}, \d{{4}}-\d\d-\d\d", cited)
    docs = verify_lines(lines)
    assert json.loads(docs.ranking)["citation"] == json.loads(docs.matrix)["citation"] == cited


def test_export_and_replay_take_the_standing_publication_unless_one_is_named(settings, monkeypatch, tmp_path, capsys):
    """A provisional publication, then the week's final one: `audit export` wrote publication 1 by default, the
    superseded provisional one, and `audit replay --help` called what it prints "the first publication's bytes"
    while it printed the standing one; there was no way to replay another publication."""
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    write_week(record, {"a": 17, "b": 3})
    assert publish_week(record, ReadModels(settings, record), PublishWeek(week=WEEK, by="lead")).provisional
    record.close()
    after = week_end(WEEK) + timedelta(hours=1)
    record = open_record(settings, clock=lambda: after)
    final = publish_week(record, ReadModels(settings, record), PublishWeek(week=WEEK, by="lead"))
    record.close()
    assert not final.provisional
    out = tmp_path / "week.jsonl"
    capsys.readouterr()
    assert main(["audit", "export", "--week", WEEK, "--out", str(out)]) == 0
    assert f"{WEEK}, publication 2 at log position {final.position}" in capsys.readouterr().out
    assert "provisional" not in json.loads(out.read_bytes().splitlines()[0])
    assert main(["audit", "export", "--week", WEEK, "--out", str(out), "--publication", "1"]) == 0
    assert "publication 1 (provisional)" in capsys.readouterr().out
    assert json.loads(out.read_bytes().splitlines()[0])["provisional"] is True

    assert main(["audit", "replay", "--week", WEEK]) == 0
    standing = capsys.readouterr().out.encode()
    assert sha256_hex(standing.rstrip(b"\n")) == final.ranking_sha256
    assert main(["audit", "replay", "--week", WEEK, "--publication", "1", "--matrix"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["week"] == WEEK
    assert main(["audit", "replay", "--week", WEEK, "--publication", "3"]) == 1
    assert capsys.readouterr().err.strip().endswith(f"week {WEEK} has 2 publication(s)")
    with pytest.raises(SystemExit):
        main(["audit", "replay", "--help"])
    helped = " ".join(capsys.readouterr().out.split())
    assert "the first publication's bytes" not in helped and "the standing publication" in helped
