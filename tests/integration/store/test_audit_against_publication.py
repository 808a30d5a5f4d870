"""`audit verify` checks a file against the published values, from outside the file, and says what it checked.

A file's chain and header hashes only show that it agrees with itself: anyone can reseal a file. Two forgeries that
do (runs flipped with the header's hashes rewritten to match; lab receipts stripped and the agent version rewritten,
which change neither document) used to print "ranking and Matrix hash as published" and exit 0. Checked against the
week's published values (its JSON, or the values typed), both are refused in one line naming what differs; the
genuine export verifies. The command runs as a user runs it, in a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from record_builders import WEEK, StepClock, into_week, point_the_cli_at, unpacked_store

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from adapters.settings import Settings
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.commands import PublishWeek
from domain.eventlog.record import Record
from domain.eventlog.schema import Envelope, payload_decoder
from domain.projections.canonical import canonical_struct_bytes, sha256_hex
from domain.projections.documents import week_documents
from domain.projections.fold import LogState
from domain.week.anchors import week_publications
from domain.week.audit import check_lines, events_sha256, export_lines, published_events, week_events
from domain.week.publications import Publication
from domain.week.publishing import publish_week
from ops.cli import main
from tests.integration.store.audit_files import Lines, lines_of, refused, resealed, verify

ROOT = Path(__file__).resolve().parents[3]
FORMAT_1 = ROOT / "tests" / "fixtures" / "format-1"
COURSE = load_course()


class Exported(msgspec.Struct, kw_only=True):
    publication: Publication
    file: Path
    """The genuine audit file, as `canitbuy audit export` wrote it."""
    published: Path
    """The week's JSON (/api/weeks/W.json) as the site serves it."""


def write_runs(record: Record) -> None:
    """Models a, b and c over the whole course; a pass carries a lab receipt, as lab checkouts do."""
    into_week(record, WEEK)
    runs = []
    for model, passes in (("a", 17), ("b", 9), ("c", 4)):
        for i, station in enumerate(COURSE.codes):
            passed = station == "s01" or i <= passes
            run = Run.schedule(
                station=station,
                model=model,
                course_version="2.1",
                week=WEEK,
                kind="reader" if COURSE.station(station).is_reading else "browser",
                requested_by="test",
                repeat=0,
                org=None,
                at=record.clock(),
            )
            run.start(worker="w", browser_version="chromium/140", agent_version="canitbuy-agent/1.4", at=record.clock())
            verdict = Verdict(
                passed=passed,
                outcome="passed" if passed else "stopped",
                stage="entry",
                step=2,
                receipt=f"eyJhbGciOiJFZERTQSJ9.{model}-{station}.c2ln" if passed else None,
            )
            run.finish(verdict, steps=2, seconds=3.0, at=record.clock())
            runs.append(run)
    record.save(*runs)


@pytest.fixture
def exported(settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Exported:
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    try:
        write_runs(record)
        readmodels = ReadModels(settings, record)
        publication = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
        published = tmp_path / "published.json"
        published.write_bytes(week_publications(WEEK, readmodels.publications(WEEK)))
    finally:
        record.close()
    file = tmp_path / "week.jsonl"
    assert main(["audit", "export", "--week", WEEK, "--out", str(file)]) == 0
    return Exported(publication=publication, file=file, published=published)


def with_header_recomputed(lines: Lines) -> Lines:
    """The header's ranking and Matrix sha256 and citation made to match the (changed) events, with the
    project's own fold and documents."""
    header, state = lines[0], LogState()
    for line in lines[1:]:
        payload = payload_decoder(line["type"]).decode(canonical_struct_bytes(line["payload"]))
        state.apply(
            Envelope(line["position"], line["originator_id"], line["originator_version"], line["type"], payload)
        )
    docs = week_documents(state.week_facts(header["week"]), header.get("documents_format", 1))
    header |= {
        "ranking_sha256": sha256_hex(docs.ranking),
        "matrix_sha256": sha256_hex(docs.matrix),
        "citation": json.loads(docs.ranking)["citation"],
    }
    return lines


def flipped_runs(genuine: Path, path: Path) -> Path:
    """Forgery 1: every run of c that failed now passes, the header's hashes rewritten to match, resealed."""
    lines = lines_of(genuine)
    of_c = {
        line["originator_id"]
        for line in lines
        if line.get("type") == "Run.Scheduled" and line["payload"]["model"] == "c"
    }
    flipped = 0
    for line in lines[1:]:
        verdict = line["payload"].get("verdict")
        if line["type"] == "Run.Finished" and line["originator_id"] in of_c and not verdict["passed"]:
            verdict |= {"passed": True, "outcome": "passed"}
            flipped += 1
    assert flipped > 0
    return resealed(with_header_recomputed(lines), path)


def receipts_stripped(genuine: Path, path: Path) -> Path:
    """Forgery 2: no lab receipts, another agent version; the genuine header (the documents do not change)."""
    lines = lines_of(genuine)
    for line in lines[1:]:
        if line["type"] == "Run.Finished":
            line["payload"]["verdict"]["receipt"] = None
        if line["type"] == "Run.Started":
            line["payload"]["agent_version"] = "someone-else/9.9"
    return resealed(lines, path)


def test_a_publication_records_the_sha256_of_the_events_its_audit_file_holds(exported, settings):
    assert exported.publication.events_sha256 == check_lines(exported.file.read_bytes().splitlines()).events_sha256
    record = open_record(settings)
    try:
        p = exported.publication
        assert events_sha256(published_events(record.read_log, WEEK, p.position, p.documents_format)) == p.events_sha256
    finally:
        record.close()
    published = json.loads(exported.published.read_bytes())["publications"][0]
    assert (published["ranking_sha256"], published["matrix_sha256"], published["events_sha256"]) == (
        p.ranking_sha256,
        p.matrix_sha256,
        p.events_sha256,
    )


def test_a_genuine_export_verifies_against_the_week_json(exported):
    done = verify(exported.file, "--published", exported.published)
    assert done.returncode == 0, done.stderr
    p = exported.publication
    for line in (
        f"ranking sha256 {p.ranking_sha256}",
        f"Matrix  sha256 {p.matrix_sha256}",
        f"events  sha256 {p.events_sha256}",
    ):
        assert line in done.stdout
    assert (
        f"As published: the ranking, Matrix and events sha256 equal those of publication 1 of {WEEK} in "
        f"{exported.published}."
    ) in done.stdout
    assert "provisional publication" in done.stdout  # the week was still in progress


def test_a_genuine_export_verifies_against_the_values_typed(exported):
    p = exported.publication
    done = verify(
        exported.file,
        "--ranking-sha256",
        p.ranking_sha256.upper(),
        "--matrix-sha256",
        p.matrix_sha256,
        "--events-sha256",
        p.events_sha256,
    )
    assert done.returncode == 0, done.stderr
    assert "Equal to the values given: the ranking, Matrix and events sha256." in done.stdout
    assert "Not given" not in done.stdout


def test_runs_flipped_with_the_header_rewritten_are_refused_against_the_published_values(exported, tmp_path):
    forged = flipped_runs(exported.file, tmp_path / "forged.jsonl")
    check_lines(forged.read_bytes().splitlines())  # the forgery agrees with itself
    alone = verify(forged)
    assert alone.returncode == 0 and "Self-consistent only" in alone.stdout
    assert "as published" not in alone.stdout.lower()
    err = refused(verify(forged, "--published", exported.published))
    assert "not as published: differs from publication 1 of 2026-W48" in err
    assert f"ranking sha256 (published {exported.publication.ranking_sha256}, from the file " in err
    assert "Matrix sha256 (published" in err and "events sha256 (published" in err
    err = refused(verify(forged, "--ranking-sha256", exported.publication.ranking_sha256))
    assert "differs from the values given: ranking sha256" in err


def test_receipts_stripped_are_refused_by_the_events_sha256(exported, tmp_path):
    forged = receipts_stripped(exported.file, tmp_path / "forged2.jsonl")
    checked = check_lines(forged.read_bytes().splitlines())
    p = exported.publication
    # the documents do not change, so the ranking and Matrix hashes alone cannot tell
    assert (checked.ranking_sha256, checked.matrix_sha256) == (p.ranking_sha256, p.matrix_sha256)
    err = refused(verify(forged, "--published", exported.published))
    assert f"events sha256 (published {p.events_sha256}, from the file {checked.events_sha256})" in err
    assert "ranking sha256" not in err and "Matrix sha256" not in err
    refused(verify(forged, "--events-sha256", p.events_sha256))


def test_a_header_that_calls_a_provisional_publication_final_is_refused(exported, tmp_path):
    lines = lines_of(exported.file)
    assert lines[0].pop("provisional") is True
    err = refused(verify(resealed(lines, tmp_path / "final.jsonl"), "--published", exported.published))
    assert "provisional (published True, the file's header False)" in err


def test_without_outside_values_the_file_is_only_called_self_consistent(exported):
    done = verify(exported.file)
    assert done.returncode == 0, done.stderr
    assert f"events  sha256 {exported.publication.events_sha256}" in done.stdout
    assert "Self-consistent only" in done.stdout and "Nothing outside the file was checked" in done.stdout
    assert f"--published https://canitbuy.com/api/weeks/{WEEK}.json" in done.stdout
    assert "as published" not in done.stdout.lower()


def test_values_not_given_are_named_as_not_checked(exported):
    done = verify(exported.file, "--ranking-sha256", exported.publication.ranking_sha256)
    assert done.returncode == 0, done.stderr
    assert "Equal to the values given: the ranking sha256. Not given, so not checked: Matrix and events." in done.stdout


def test_a_wrong_value_typed_is_named(exported):
    err = refused(verify(exported.file, "--events-sha256", "0" * 64))
    assert f"events sha256 (published {'0' * 64}, from the file {exported.publication.events_sha256})" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--published", "x.json", "--ranking-sha256", "0" * 64],
        ["--events-sha256", "abc"],
        ["--matrix-sha256", "g" * 64],
    ],
)
def test_usage_errors_are_one_line_exit_2(exported, args):
    refused(verify(exported.file, *args), code=2)


def test_published_values_that_name_another_week_or_position_are_refused(exported, tmp_path):
    record = json.loads(exported.published.read_bytes())
    other = tmp_path / "other-week.json"
    other.write_text(json.dumps(record | {"week": "2026-W47"}))
    assert "the file is of 2026-W48 but the published values are of 2026-W47" in refused(
        verify(exported.file, "--published", other)
    )
    moved = tmp_path / "moved.json"
    record["publications"][0]["position"] += 1
    moved.write_text(json.dumps(record))
    assert f"no publication of {WEEK} is at the file's log position {exported.publication.position}" in refused(
        verify(exported.file, "--published", moved)
    )


def test_published_values_that_cannot_be_read_are_one_line(exported, tmp_path):
    assert "cannot read" in refused(verify(exported.file, "--published", tmp_path / "missing.json"))
    (ranking := tmp_path / "ranking.json").write_text('{"format": "canitbuy-ranking/3", "week": "2026-W48"}')
    assert "is not a week's JSON" in refused(verify(exported.file, "--published", ranking))
    (broken := tmp_path / "broken.json").write_text("<html>")
    assert "is not a week's JSON" in refused(verify(exported.file, "--published", broken))


@pytest.fixture
def format_1_store(tmp_path: Path) -> Settings:
    """The store of 1 December 2026 (tests/fixtures/format-1), published before publications recorded events."""
    return unpacked_store(FORMAT_1, tmp_path / "old")


def test_a_publication_from_before_events_were_recorded_verifies_with_its_events_not_anchored(format_1_store, tmp_path):
    record = open_record(format_1_store)
    try:
        readmodels = ReadModels(format_1_store, record)
        readmodels.catch_up()
        assert readmodels.publications(WEEK)[0].events_sha256 is None
        (published := tmp_path / "published.json").write_bytes(week_publications(WEEK, readmodels.publications(WEEK)))
    finally:
        record.close()
    assert json.loads(published.read_bytes())["publications"][0]["events_sha256"] is None
    done = verify(FORMAT_1 / "week-2026-W48.audit.jsonl", "--published", published)
    assert done.returncode == 0, done.stderr
    assert (
        "As published, events not anchored: the ranking and Matrix sha256 equal those of publication 1" in done.stdout
        and "checked against nothing but the file itself" in done.stdout
    )


def test_the_events_sha256_holds_as_the_schema_grows(format_1_store):
    """Events gained fields with defaults since 1 December 2026, so today's export of that store differs from the
    file written then in nearly every line; the events sha256 of both is the same, so a publication's anchor stays
    good for every later export."""
    record = open_record(format_1_store)
    try:
        readmodels = ReadModels(format_1_store, record)
        readmodels.catch_up()
        p = readmodels.publications(WEEK)[0]
        today = list(export_lines(week_events(record.read_log, WEEK, p.position), p))
        anchored = events_sha256(published_events(record.read_log, WEEK, p.position, p.documents_format))
    finally:
        record.close()
    then = (FORMAT_1 / "week-2026-W48.audit.jsonl").read_bytes().splitlines()
    assert len(today) == len(then) and sum(a != b for a, b in zip(today, then, strict=True)) > 100
    assert check_lines(today).events_sha256 == check_lines(then).events_sha256 == anchored
