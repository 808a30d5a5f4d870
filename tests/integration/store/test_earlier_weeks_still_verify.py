"""Weeks published in earlier documents formats still replay to the bytes they were published with.

The format-1 fixtures were written by the code of 1 December 2026 before issue #10 (commit 443ffa9): three built-in
agents ran the whole course for 2026-W48 in Chromium, the week was published, and its audit file exported. The log
is that run's SQLite event store as it was. The format-2 audit file was written by commit 4e54a08, before the
Matrix carried its stage order (tests/fixtures/format-2/generate.py says how).
"""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

import pytest
from record_builders import point_the_cli_at, unpacked_store

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from adapters.settings import Settings
from domain.eventlog.commands import PublishWeek
from domain.projections.canonical import sha256_hex
from domain.projections.documents import DOCUMENTS_FORMAT, MATRIX_FORMAT
from domain.week.publishing import publish_week
from ops.cli import main

FIXTURES = Path(__file__).parents[2] / "fixtures" / "format-1"
AUDIT_FILE = FIXTURES / "week-2026-W48.audit.jsonl"
FORMAT_2_AUDIT_FILE = FIXTURES.parent / "format-2" / "week-2026-W48.audit.jsonl"
WEEK = "2026-W48"


@pytest.fixture
def old_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    settings = unpacked_store(FIXTURES, tmp_path / "var")
    point_the_cli_at(settings, monkeypatch)
    return settings


def header() -> dict:
    return json.loads(AUDIT_FILE.read_bytes().splitlines()[0])


def test_an_audit_file_published_in_format_1_still_verifies(capsys):
    assert main(["audit", "verify", str(AUDIT_FILE)]) == 0
    assert "Self-consistent only" in capsys.readouterr().out  # nothing outside the file was given


def test_an_audit_file_published_in_format_2_still_verifies(capsys):
    assert json.loads(FORMAT_2_AUDIT_FILE.read_bytes().splitlines()[0])["documents_format"] == 2
    assert main(["audit", "verify", str(FORMAT_2_AUDIT_FILE)]) == 0
    assert "Self-consistent only" in capsys.readouterr().out  # nothing outside the file was given


def test_a_log_written_before_format_2_replays_its_week_to_the_published_bytes(old_store):
    record = open_record(old_store)
    try:
        readmodels = ReadModels(old_store, record)
        readmodels.catch_up()
        published = readmodels.published_documents(WEEK)
        assert sha256_hex(published.ranking) == header()["ranking_sha256"]
        assert sha256_hex(published.matrix) == header()["matrix_sha256"]
        assert json.loads(published.ranking)["format"] == "canitbuy-ranking/1"
        # the week as it reads now is in today's format, with the method's citation
        now = json.loads(readmodels.week_documents(WEEK).ranking)
        assert now["format"] == "canitbuy-ranking/3" and now["citation"].startswith("CanItBuy AI agent ranking, ")
        assert json.loads(readmodels.week_documents(WEEK).matrix)["format"] == MATRIX_FORMAT
    finally:
        record.close()


def test_every_aggregate_of_a_log_written_before_the_domain_was_grouped_loads_with_todays_classes(old_store):
    """The fixture's events are stored under the topics of the flat domain/ (domain.agent.runs:Run.Finished, ...)."""
    record = open_record(old_store)
    try:
        events = record.read_log(after=0, limit=1000)
        assert {e.name for e in events} == {"CourseRelease.Released", "Week.Opened", "Week.Published",
                                            "Run.Scheduled", "Run.Started", "Run.StepRecorded", "Run.Finished"}
        runs = {UUID(e.originator_id) for e in events if e.name == "Run.Finished"}
        assert len(runs) == 54 and {record.get_run(r).status for r in runs} == {"finished"}
        week = record.week_record(WEEK)
        assert week is not None and [p.ranking_sha256 for p in week.publications] == [header()["ranking_sha256"]]
        assert record.released_versions() == ["2.1"]
    finally:
        record.close()


def test_a_new_publication_of_an_old_week_is_written_in_the_current_format_and_both_verify(old_store, tmp_path):
    record = open_record(old_store)
    try:
        readmodels = ReadModels(old_store, record)
        publication = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
        assert publication.documents_format == DOCUMENTS_FORMAT and not publication.provisional
        first, second = readmodels.publications(WEEK)
        assert (first.documents_format, second.documents_format) == (1, DOCUMENTS_FORMAT)
        assert sha256_hex(readmodels.published_documents(WEEK, index=1).ranking) == second.ranking_sha256
    finally:
        record.close()
    out = tmp_path / "again.jsonl"
    assert main(["audit", "export", "--week", WEEK, "--out", str(out)]) == 0  # the standing (first) publication
    assert json.loads(out.read_bytes().splitlines()[0])["ranking_sha256"] == header()["ranking_sha256"]
    assert main(["audit", "verify", str(out)]) == 0
