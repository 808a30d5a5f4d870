"""Documents format 4 counts the run that started last and applies the cut-off to the start; weeks published in
format 3 still replay, export and verify to the bytes they were published with.

The format-3 fixtures (tests/fixtures/format-3/generate.py says how) were written by the code before format 4:
2026-W48 has repeats started side by side where the latest finish is not the latest start, 2026-W43 a run started
a second before the 22 October cut-off that ended after it. The same history is also written here, on SQLite and
PostgreSQL, with a format-3 publication beside a format-4 one.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow
import pytest
from record_builders import COURSE, WEEK, StepClock, finished_run, point_the_cli_at

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from adapters.settings import Settings
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.eventlog.commands import PublishWeek
from domain.eventlog.record import Record
from domain.projections.canonical import sha256_hex
from domain.projections.dataset_card import RANKING_SQL_BY_END
from domain.projections.documents import DOCUMENTS_FORMAT, MATRIX_FORMAT, week_documents
from domain.week.publishing import publish_week, replay
from ops.cli import main

FIXTURES = Path(__file__).parents[2] / "fixtures" / "format-3"
DOCS = Path(__file__).parents[3] / "docs" / "dataset.md"
OLD_WEEK = "2026-W43"
NOON = datetime(2026, 11, 24, 12, tzinfo=UTC)
CUTOFF = datetime(2026, 10, 22, 9, tzinfo=UTC)
AFTER_BOTH = datetime(2026, 11, 30, 9, tzinfo=UTC)


def audit_file(week: str) -> Path:
    return FIXTURES / f"week-{week}.audit.jsonl"


def header(path: Path) -> dict:
    return json.loads(path.read_bytes().splitlines()[0])


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()[1:]]


def cell(matrix: bytes, model: str, station: str) -> dict:
    found: dict = next(m for m in json.loads(matrix)["models"] if m["model"] == model)["cells"][station]
    return found


def entry(ranking: bytes, model: str) -> dict:
    found: dict = next(e for e in json.loads(ranking)["entries"] if e["model"] == model)
    return found


def start_of(record: Record, run_id: str) -> datetime:
    return next(e.at for e in record.read_log(after=0, limit=10_000)
                if e.name == "Run.Started" and e.originator_id == run_id)


# --- the format-3 fixtures, written by the code before format 4 ------------------------------------------------

@pytest.fixture
def old_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The fixtures' event store and read models, as the format-3 code left them; the CLI pointed at them."""
    data = tmp_path / "var"
    data.mkdir()
    for name in ("canitbuy.sqlite3", "readmodels.sqlite3"):
        with gzip.open(FIXTURES / f"{name}.gz") as packed, (data / name).open("wb") as out:
            shutil.copyfileobj(packed, out)
    settings = Settings(data_dir=data)
    point_the_cli_at(settings, monkeypatch)
    return settings


@pytest.mark.parametrize("week", [OLD_WEEK, WEEK])
def test_an_audit_file_published_in_format_3_still_verifies(week, capsys):
    assert header(audit_file(week))["documents_format"] == 3
    assert main(["audit", "verify", str(audit_file(week))]) == 0
    assert "Self-consistent only" in capsys.readouterr().out  # nothing outside the file was given


def test_a_format_3_week_replays_to_its_bytes_and_counted_the_latest_finish(old_store, capsys):
    assert main(["check"]) == 0
    assert "2 publications recompute to their recorded sha256" in capsys.readouterr().out
    record = open_record(old_store)
    try:
        readmodels = ReadModels(old_store, record)
        readmodels.catch_up()
        w48, w43 = readmodels.published_documents(WEEK), readmodels.published_documents(OLD_WEEK)
        assert sha256_hex(w48.ranking) == header(audit_file(WEEK))["ranking_sha256"]
        assert sha256_hex(w48.matrix) == header(audit_file(WEEK))["matrix_sha256"]
        assert json.loads(w48.ranking)["format"] == "canitbuy-ranking/2"
        assert json.loads(w48.matrix)["format"] == "canitbuy-matrix/3"
        # as published: r1, the slow failure that finished last; the cut-off's run counted by its end
        s05 = cell(w48.matrix, "alpha", "s05")
        assert (entry(w48.ranking, "alpha")["passed"], s05["outcome"]) == (16, "time_limit")
        assert entry(w48.ranking, "beta")["no_result"] == {"s09": "model_connection"}
        assert cell(w43.matrix, "alpha", "s01")["status"] == "passed"
    finally:
        record.close()


@pytest.mark.parametrize("week", [OLD_WEEK, WEEK])
def test_a_format_3_week_exports_the_file_it_exported_before(old_store, tmp_path, week):
    out = tmp_path / "again.jsonl"
    assert main(["audit", "export", "--week", week, "--out", str(out)]) == 0
    assert out.read_bytes() == audit_file(week).read_bytes()


def test_a_new_publication_is_format_4_and_counts_the_run_that_started_last(old_store, tmp_path, capsys):
    record = open_record(old_store)
    try:
        readmodels = ReadModels(old_store, record)  # read models the format-3 code kept: made again, not trusted
        published = {w: publish_week(record, readmodels, PublishWeek(week=w, by="lead")) for w in (WEEK, OLD_WEEK)}
        assert {p.documents_format for p in published.values()} == {DOCUMENTS_FORMAT}  # 4 then, 5 now
        w48, w43 = readmodels.published_documents(WEEK, 1), readmodels.published_documents(OLD_WEEK, 1)
        assert sha256_hex(w48.ranking) == published[WEEK].ranking_sha256
        assert (json.loads(w48.ranking)["format"], json.loads(w48.matrix)["format"]) == (
            "canitbuy-ranking/3", MATRIX_FORMAT)
        # r2, which started last and passed in 30 s, counts; no longer r1, which failed at the limit later
        s05 = cell(w48.matrix, "alpha", "s05")
        assert (entry(w48.ranking, "alpha")["passed"], s05["status"]) == (17, "passed")
        assert start_of(record, s05["run_id"]) == NOON + timedelta(seconds=2)
        # beta's s09: the repeat started last hit our error (the one started first lost the model, later)
        assert entry(w48.ranking, "beta")["no_result"] == {"s09": "our_error"}
        # the run started at 08:59:59 on 22 October is no result; the one started at 09:00:00 is
        assert entry(w43.ranking, "alpha")["reasons"] == ["no_control_result", "stations_missing"]
        assert cell(w43.matrix, "alpha", "s01")["status"] == "not_run"
        assert cell(w43.matrix, "alpha", "s02")["status"] == "passed"
        assert json.loads(readmodels.repeats_bytes(WEEK))["format"] == "canitbuy-repeats/2"
        # the standing publication is still the first, final one, in format 3
        assert sha256_hex(readmodels.published_documents(WEEK).ranking) == header(audit_file(WEEK))["ranking_sha256"]
    finally:
        record.close()
    assert main(["check"]) == 0
    assert "4 publications recompute to their recorded sha256" in capsys.readouterr().out
    out = tmp_path / "four.jsonl"
    assert main(["audit", "export", "--week", WEEK, "--publication", "2", "--out", str(out)]) == 0
    assert header(out)["documents_format"] == DOCUMENTS_FORMAT
    starts = [line for line in lines_of(out) if line["type"] == "Run.Started"]
    assert len(starts) == 18 + 18 - 2 + 3 + 2  # every run of the week: its start decides
    assert main(["audit", "verify", str(out)]) == 0
    assert main(["audit", "export", "--week", WEEK, "--out", str(tmp_path / "three.jsonl")]) == 0
    assert (tmp_path / "three.jsonl").read_bytes() == audit_file(WEEK).read_bytes()


def test_the_dataset_of_a_format_3_week_keeps_its_card_and_bytes(old_store, tmp_path):
    assert main(["dataset", "export", "--week", WEEK, "--out", str(tmp_path)]) == 0
    kept = FIXTURES / f"dataset-{WEEK}"
    assert (tmp_path / WEEK / "README.md").read_bytes() == (kept / "README.md").read_bytes()
    sums = (tmp_path / WEEK / "SHA256SUMS").read_text()
    if pyarrow.__version__ == "26.0.1":  # the writer's name is in the Parquet footer
        assert sums == (kept / "SHA256SUMS").read_text()
    else:
        card_sum = next(line for line in sums.splitlines() if line.endswith("README.md"))
        assert card_sum in (kept / "SHA256SUMS").read_text()


# --- the same history on SQLite and PostgreSQL ---------------------------------------------------------------

def write_side_by_side(record: Record) -> dict[str, list[Run]]:
    """alpha and beta run the course; alpha's s05 as three repeats (r0, r1 fail at the limit, r2 started last
    passes first) and beta's s09 as two repeats cut short (r0 loses the model late, r1 started after it hits our
    error early), every event saved in the order it happened."""
    runs = [finished_run(record, model, station, station != "s03" or model == "alpha")
            for model in ("alpha", "beta") for station in COURSE.codes
            if (model, station) not in (("alpha", "s05"), ("beta", "s09"))]
    record.save(*runs)

    def scheduled(model: str, station: str, repeat: int) -> Run:
        return Run.schedule(station=station, model=model, course_version="2.1", week=WEEK, kind="browser",
                            requested_by="test", repeat=repeat, at=NOON - timedelta(minutes=1))

    alpha = [scheduled("alpha", "s05", r) for r in range(3)]
    beta = [scheduled("beta", "s09", r) for r in range(2)]
    record.save(*alpha, *beta)
    for i, run in enumerate(alpha + beta):
        run.start(worker="w", browser_version="b", agent_version="a", at=NOON + timedelta(seconds=i % 3))
        record.save(run)
    beta[1].cut_short("our_error", "the lab went away", steps=1, seconds=10.0, at=NOON + timedelta(seconds=11))
    record.save(beta[1])
    alpha[2].finish(Verdict(passed=True, outcome="passed", stage="order", step=9), steps=9, seconds=30.0,
                    at=NOON + timedelta(seconds=32))
    record.save(alpha[2])
    for i in range(2):
        alpha[i].finish(Verdict(passed=False, outcome="time_limit", stage="cart", step=11), steps=11,
                        seconds=150.0, at=NOON + timedelta(seconds=150 + i))
        record.save(alpha[i])
    beta[0].cut_short("model_connection", "503", steps=3, seconds=150.0, at=NOON + timedelta(seconds=150))
    record.save(beta[0])
    return {"alpha_s05": alpha, "beta_s09": beta}


def publish_in_format_3(record: Record) -> None:
    """A publication as the format-3 code made it: its documents' hashes, its format recorded."""
    docs = week_documents(replay(record.read_log).week_facts(WEEK), 3)
    record.record_publication(
        week=WEEK, position=docs.position, ranking_sha256=sha256_hex(docs.ranking),
        matrix_sha256=sha256_hex(docs.matrix), course_version=docs.course_version, by="lead", documents_format=3,
    )


def test_format_3_and_format_4_publications_of_one_week_both_replay(settings, monkeypatch, tmp_path, capsys):
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    try:
        runs = write_side_by_side(record)
        record.clock.now = AFTER_BOTH
        publish_in_format_3(record)
        readmodels = ReadModels(settings, record)
        four = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
        three = readmodels.publications(WEEK)[0]
        assert (three.documents_format, four.documents_format) == (3, DOCUMENTS_FORMAT)
        r0, r1, r2 = (str(r.id) for r in runs["alpha_s05"])
        as_three, as_four = readmodels.published_documents(WEEK, 0), readmodels.published_documents(WEEK, 1)
        assert cell(as_three.matrix, "alpha", "s05")["run_id"] == r1
        assert cell(as_four.matrix, "alpha", "s05")["run_id"] == r2
        assert cell(readmodels.week_documents(WEEK).matrix, "alpha", "s05")["run_id"] == r2  # as corrected: now
        repeats = json.loads(readmodels.repeats_bytes(WEEK))
        alpha = next(m for m in repeats["models"] if m["model"] == "alpha")["cells"]["s05"]
        assert (alpha["run_ids"], alpha["outcomes"], alpha["outcome"]) == ([r0, r1, r2], [False, False, True], False)
    finally:
        record.close()
    assert main(["check"]) == 0
    assert "2 publications recompute" in capsys.readouterr().out
    for number in (1, 2):
        out = tmp_path / f"publication-{number}.jsonl"
        assert main(["audit", "export", "--week", WEEK, "--publication", str(number), "--out", str(out)]) == 0
        assert main(["audit", "verify", str(out)]) == 0
        types = {line["type"] for line in lines_of(out)}
        assert ("Run.Started" in types) == (number == 2)


def documented_sql() -> str:
    found = re.search(r"## Recompute the ranking.*?```sql\n(.*?)```", DOCS.read_text(), re.S)
    assert found, "docs/dataset.md has no ranking query"
    return found.group(1)


def places(folder: Path, sql: str) -> list[tuple]:
    db = duckdb.connect()
    for table in ("runs", "stations", "corrections"):
        db.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{folder / (table + '.parquet')}')")
    return [tuple(row) for row in db.execute(sql).fetchall()]


def test_the_documented_query_counts_the_run_that_started_last(settings, monkeypatch, tmp_path):
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    try:
        write_side_by_side(record)
        record.clock.now = AFTER_BOTH
        publish_week(record, ReadModels(settings, record), PublishWeek(week=WEEK, by="lead"))
        published = ReadModels(settings, record).published_documents(WEEK)
    finally:
        record.close()
    assert main(["dataset", "export", "--week", WEEK, "--out", str(tmp_path)]) == 0
    folder = tmp_path / WEEK
    card = (folder / "README.md").read_text()
    assert documented_sql().strip() in card and "the latest start" in card
    want = [(e["model"], e["ranked"], e["passed"], e["of"], e["place"])
            for e in json.loads(published.ranking)["entries"]]
    assert places(folder, documented_sql()) == want == [("alpha", True, 17, 17, 1), ("beta", False, 15, 17, None)]
    # the query of formats 1 to 3 would count r1, the slow failure: the difference is the rule, not the data
    assert places(folder, RANKING_SQL_BY_END)[0] == ("alpha", True, 16, 17, 1)
