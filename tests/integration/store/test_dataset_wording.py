"""What cost_usd means, as the open dataset says it: a publication records the wording of its week's dataset
(Week.Published's dataset_format), so a new publication's card and Parquet metadata say what the number is (the
gateway's reported cost, or our estimate from the prices /agent lists), and a week published before keeps the
card, Parquet, CSV and SHA256SUMS it was published with, word for word and byte for byte.

The format-4 fixture (tests/fixtures/format-4/generate.py says how) was written by the code before the wording was
recorded: a week published in documents format 4 whose card called cost_usd the provider's list price.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import pyarrow
import pyarrow.parquet as pq
import pytest
from audit_files import verify
from record_builders import WEEK, StepClock, finished_run, point_the_cli_at, unpacked_store, write_week

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from adapters.settings import Settings
from domain.agent.actions import Click
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.eventlog.commands import PublishWeek, SetRunOutcome
from domain.eventlog.handlers import issue_correction
from domain.projections.documents import DOCUMENTS_FORMAT
from domain.week.anchors import week_publications
from domain.week.publishing import publish_week
from ops.cli import main

FIXTURES = Path(__file__).parents[2] / "fixtures" / "format-4"
AFTER_THE_WEEK = datetime(2026, 12, 1, 9, tzinfo=UTC)
OLD_CARD_LINE = "- cost_usd is the provider's list price at the time of the run, summed as floating point."
OLD_RUNS_COST = "The model provider's cost over all steps, in US dollars."
OLD_STEPS_COST = "The step's cost in US dollars."
NEW_CARD_LINE = ("- cost_usd is, for each call to the model, the cost the gateway reported or, where it reported "
                 "none, our estimate from the per-model prices /agent lists (our assumption, not a quoted list "
                 "price), summed as floating point.")


def cost_meaning(folder: Path, table: str) -> str:
    """The cost_usd column's meaning as the Parquet file's schema metadata gives it."""
    return pq.read_schema(folder / f"{table}.parquet").field("cost_usd").metadata[b"description"].decode()


def card_row(card: str, table: str) -> str:
    """The cost_usd row of the table's section of the card."""
    section = card.split(f"## {table} ({table}.parquet", 1)[1]
    return next(line for line in section.splitlines() if line.startswith("| cost_usd |"))


def export(folder: Path) -> Path:
    assert main(["dataset", "export", "--week", WEEK, "--out", str(folder)]) == 0
    return folder / WEEK


def audit_verifies(settings: Settings, tmp_path: Path, numbers: range) -> None:
    """Every publication's audit file verifies against the publications' own values, as an auditor checks it."""
    record = open_record(settings)
    try:
        published = tmp_path / "published.json"
        readmodels = ReadModels(settings, record)
        readmodels.catch_up()
        published.write_bytes(week_publications(WEEK, readmodels.publications(WEEK)))
    finally:
        record.close()
    for number in numbers:
        out = tmp_path / f"audit-{number}.jsonl"
        assert main(["audit", "export", "--week", WEEK, "--publication", str(number), "--out", str(out)]) == 0
        done = verify(out, "--published", published)
        assert done.returncode == 0, done.stderr


# --- a week published before the wording was recorded ---------------------------------------------------------

@pytest.fixture
def old_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The fixture's event store, as the code before the wording left it; the CLI pointed at it."""
    settings = unpacked_store(FIXTURES, tmp_path / "var")
    point_the_cli_at(settings, monkeypatch)
    return settings


def test_a_week_published_before_keeps_its_card_and_bytes(old_store, tmp_path, capsys):
    folder, kept = export(tmp_path / "out"), FIXTURES / f"dataset-{WEEK}"
    card = (folder / "README.md").read_text()
    assert (folder / "README.md").read_bytes() == (kept / "README.md").read_bytes()
    assert OLD_CARD_LINE in card and NEW_CARD_LINE not in card
    assert (cost_meaning(folder, "runs"), cost_meaning(folder, "steps")) == (OLD_RUNS_COST, OLD_STEPS_COST)
    sums = (folder / "SHA256SUMS").read_text()
    if pyarrow.__version__ == "26.0.1":  # the writer's name is in the Parquet footer
        assert sums == (kept / "SHA256SUMS").read_text()
    else:
        for name in ("README.md", "runs.csv", "steps.csv"):
            assert next(line for line in sums.splitlines() if line.endswith(f"  {name}")) in (
                kept / "SHA256SUMS").read_text()
    assert main(["check"]) == 0
    assert "1 publications recompute" in capsys.readouterr().out
    audit_verifies(old_store, tmp_path, range(1, 2))


def test_a_later_publication_of_that_week_records_the_wording_and_its_releases_keep_the_old_one(
        old_store, tmp_path, capsys):
    """The week's first final publication stands "as published", so its releases keep its words; the publication
    after a correction records today's wording, and every publication still replays and verifies."""
    record = open_record(old_store, clock=StepClock(AFTER_THE_WEEK))
    try:
        readmodels = ReadModels(old_store, record)
        readmodels.catch_up()
        run = next(r for r in readmodels.week_facts(WEEK).runs if r.model == "beta" and r.station == "s03")
        issue_correction(record, readmodels, SetRunOutcome(
            run_id=UUID(run.run_id), outcome="passed", reason="judge bug", public_text="beta passed s03.", by="staff"))
        later = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
        assert (later.documents_format, later.dataset_format) == (DOCUMENTS_FORMAT, 2)
        first, second = readmodels.publications(WEEK)
        assert (first.dataset_format, second.dataset_format) == (1, 2)
    finally:
        record.close()
    card = (export(tmp_path / "out") / "README.md").read_text()
    assert OLD_CARD_LINE in card and NEW_CARD_LINE not in card
    assert main(["check"]) == 0
    assert "2 publications recompute" in capsys.readouterr().out
    audit_verifies(old_store, tmp_path, range(1, 3))


# --- a week published now --------------------------------------------------------------------------------------

def test_a_new_publication_says_what_cost_usd_is(settings, monkeypatch, tmp_path, capsys):
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    try:
        write_week(record, {"a": 17, "b": 11})
        run = Run.schedule(station="s09", model="c", course_version="2.1", week=WEEK, kind="browser",
                           requested_by="test", at=record.clock())
        run.start(worker="w", browser_version="b", agent_version="a", at=record.clock())
        run.record_step(StepRecord(number=1, url="https://s09.lab/", action=Click(id="e7"), result="ok",
                                   tokens_in=1000, tokens_out=30, cost_usd=0.25), at=record.clock())
        run.cut_short("our_error", "the lab went away", steps=1, seconds=2.0, at=record.clock())
        record.save(run, finished_run(record, "c", "s01", True))
        record.clock.now = AFTER_THE_WEEK
        publication = publish_week(record, ReadModels(settings, record), PublishWeek(week=WEEK, by="lead"))
        assert publication.dataset_format == 2
        recorded = next(e for e in record.read_log(after=0, limit=10_000) if e.name == "Week.Published")
        assert recorded.payload.dataset_format == 2  # in the stored event, which a replay reads
    finally:
        record.close()
    folder = export(tmp_path / "out")
    card = (folder / "README.md").read_text()
    assert NEW_CARD_LINE in card and OLD_CARD_LINE not in card
    runs_meaning, steps_meaning = cost_meaning(folder, "runs"), cost_meaning(folder, "steps")
    for meaning in (runs_meaning, steps_meaning):
        assert "the gateway reported" in meaning and "our estimate from the per-model prices /agent lists" in meaning
        assert "provider" not in meaning
    assert card_row(card, "runs") == f"| cost_usd | float64 | {runs_meaning} |"
    assert card_row(card, "steps") == f"| cost_usd | float64 | {steps_meaning} |"
    assert pq.read_table(folder / "steps.parquet").column("cost_usd").to_pylist() == [0.25]
    assert main(["check"]) == 0
    assert "1 publications recompute" in capsys.readouterr().out
    audit_verifies(settings, tmp_path, range(1, 2))
    header = json.loads((tmp_path / "audit-1.jsonl").read_bytes().splitlines()[0])
    assert "dataset_format" not in header  # the audit file is of the ranking and Matrix alone, as before
