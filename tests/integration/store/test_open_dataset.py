"""Issue 19: a published week as an open dataset. The same bytes on every export, the documented DuckDB query gives
the published places, private runs never appear, verdicts as published and as corrected, typed documented columns."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from record_builders import COURSE, WEEK, StepClock, finished_run, point_the_cli_at, write_week

from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from domain.agent.actions import Click, Type
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.eventlog.commands import PublishWeek, SetRunOutcome, VoidRun
from domain.eventlog.handlers import issue_correction
from domain.projections.dataset_tables import TABLES
from domain.week.publishing import publish_week
from ops.cli import main

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs" / "dataset.md"
B_S14, C_S04, D_S12 = 18 + 13, 2 * 18 + 3, 3 * 18 + 11
"""Indexes into write_week's runs: 18 stations a model, in course order."""
STEPS = [
    StepRecord(number=1, url="https://s09.lab/", title="Shop", screenshot="ab" * 32, action=Click(id="e7"),
               result="ok", duration_ms=1500, model_ms=900, tokens_in=1000, tokens_out=30, cost_usd=0.25),
    StepRecord(number=2, url="https://s09.lab/checkout", action=Type(id="e9", text="Ada"), result="ok",
               duration_ms=800, model_ms=500, tokens_in=1100, tokens_out=20, cost_usd=0.5),
]


def documented_sql() -> str:
    """The ranking query exactly as docs/dataset.md prints it."""
    found = re.search(r"## Recompute the ranking.*?```sql\n(.*?)```", DOCS.read_text(), re.S)
    assert found, "docs/dataset.md has no ranking query"
    return found.group(1)


@pytest.fixture
def store(settings, monkeypatch):
    """A published week: a shared place, models missing a station, one without the control, a cut-short run, a
    voided run, steps with tokens, a private test; a correction after the publication. The CLI reads the same store."""
    point_the_cli_at(settings, monkeypatch)
    record = open_record(settings, clock=StepClock())
    runs = write_week(record, {"a": 17, "b": 11, "c": 11, "d": 10})
    write_week(record, {"secret": 17}, org="acme")
    # e: everything but s09, whose run was cut short by our error after two steps; f: fails the control.
    e = [finished_run(record, "e", s, True) for s in COURSE.codes if s != "s09"]
    cut = Run.schedule(station="s09", model="e", course_version="2.1", week=WEEK, kind="browser",
                       requested_by="test", at=record.clock())
    cut.start(worker="w", browser_version="b", agent_version="a", at=record.clock(), agent_release=3)
    for step in STEPS:
        cut.record_step(step, at=record.clock())
    cut.cut_short("our_error", "the lab went away", steps=1, seconds=9.5, at=record.clock())
    f = [finished_run(record, "f", s, s != "s01") for s in COURSE.codes]
    record.save(*e, cut, *f)
    # d's s12 passes by correction (d then shares b's place); c's s04 is voided (c is then missing a station).
    readmodels = ReadModels(settings, record)
    issue_correction(record, readmodels, SetRunOutcome(run_id=runs[D_S12].id, outcome="passed", reason="judge bug",
                                                       public_text="d passed s12.", by="staff"))
    issue_correction(record, readmodels, VoidRun(run_id=runs[C_S04].id, reason="lab fault",
                                                 public_text="c's s04 run did not count.", by="staff"))
    publication = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
    issue_correction(record, readmodels, SetRunOutcome(run_id=runs[B_S14].id, outcome="passed", reason="judge bug",
                                                       public_text="b passed s14.", by="staff"))
    record.close()
    return settings, publication, runs


def export(folder: Path) -> dict[str, bytes]:
    assert main(["dataset", "export", "--week", WEEK, "--out", str(folder)]) == 0
    return {p.name: p.read_bytes() for p in sorted((folder / WEEK).iterdir())}


def test_exporting_again_gives_the_same_bytes_and_the_sums_check(store, tmp_path, capsys):
    first = export(tmp_path / "one")
    assert sorted(first) == sorted([f"{t}.{x}" for t in TABLES for x in ("parquet", "csv")] + ["README.md",
                                                                                             "SHA256SUMS"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "ops.cli", "dataset", "export", "--week", WEEK, "--out",
                           str(tmp_path / "two")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    second = {p.name: p.read_bytes() for p in sorted((tmp_path / "two" / WEEK).iterdir())}
    assert second == first
    sums = dict(reversed(line.split("  ")) for line in first["SHA256SUMS"].decode().splitlines())
    assert set(sums) == set(first) - {"SHA256SUMS"}
    assert all(hashlib.sha256(first[name]).hexdigest() == digest for name, digest in sums.items())
    assert "wrote" in capsys.readouterr().out


def test_the_dataset_of_a_published_week_holds_still_while_the_log_moves_on(store, tmp_path):
    settings, _, _ = store
    before = export(tmp_path / "before")
    record = open_record(settings, clock=StepClock())
    write_week(record, {"late": 3}, week="2026-W49")  # the next week's runs: not this week's dataset
    record.close()
    assert export(tmp_path / "after") == before


def test_the_documented_query_gives_the_published_places(store, tmp_path):
    settings, _, _ = store
    export(tmp_path)
    folder = tmp_path / WEEK
    db = duckdb.connect()
    for table in ("runs", "stations", "corrections"):
        db.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{folder / (table + '.parquet')}')")
    got = [(m, r, p, of, place) for m, r, p, of, place in db.execute(documented_sql()).fetchall()]
    record = open_record(settings)
    try:
        published = json.loads(ReadModels(settings, record).published_documents(WEEK).ranking)
    finally:
        record.close()
    want = [(e["model"], e["ranked"], e["passed"], e["of"], e["place"]) for e in published["entries"]]
    assert got == want
    places = {m: place for m, _, _, _, place in got}
    # a first; b and d share second (d by a correction); c, e and f unranked (voided, cut short, no control).
    assert (places["a"], places["b"], places["d"]) == (1, 2, 2) and places["c"] is places["e"] is places["f"] is None


def test_private_runs_never_appear(store, tmp_path):
    files = export(tmp_path)
    assert all(b"secret" not in data and b"acme" not in data for data in files.values())
    runs = pq.read_table(tmp_path / WEEK / "runs.parquet").to_pylist()
    assert {r["model"] for r in runs} == {"a", "b", "c", "d", "e", "f"}


def test_runs_and_steps_hold_what_researchers_study(store, tmp_path):
    _, publication, runs = store
    export(tmp_path)
    rows = {r["run_id"]: r for r in pq.read_table(tmp_path / WEEK / "runs.parquet").to_pylist()}
    a_s02 = rows[str(runs[1].id)]
    assert (a_s02["station_stage"], a_s02["status"], a_s02["passed"], a_s02["outcome"], a_s02["course_version"]) == (
        COURSE.station("s02").stage, "finished", True, "passed", "2.1")
    cut = next(r for r in rows.values() if r["cause"])
    assert (cut["status"], cut["cause"], cut["passed"], cut["agent_release"], cut["seconds"], cut["steps"]) == (
        "cut_short", "our_error", None, 3, 9.5, 2)
    assert (cut["tokens_in"], cut["tokens_out"], cut["cost_usd"]) == (2100, 50, 0.75)
    assert all(r["last_position"] <= publication.position for r in rows.values())
    steps = pq.read_table(tmp_path / WEEK / "steps.parquet").to_pylist()
    assert [(s["run_id"], s["number"], s["action_kind"], s["action_target"], s["action_value"],
             s["screenshot_sha256"], s["duration_ms"]) for s in steps] == [
        (cut["run_id"], 1, "click", "e7", None, "ab" * 32, 1500), (cut["run_id"], 2, "type", "e9", "Ada", None, 800)]


def test_verdicts_as_published_and_as_corrected(store, tmp_path):
    _, _, runs = store
    export(tmp_path)
    verdicts = {v["run_id"]: v for v in pq.read_table(tmp_path / WEEK / "verdicts.parquet").to_pylist()}
    d_s12, c_s04, b_s14 = (verdicts[str(runs[i].id)] for i in (D_S12, C_S04, B_S14))
    assert (d_s12["judged_passed"], d_s12["published_passed"], d_s12["corrected_passed"]) == (False, True, True)
    assert (c_s04["published_void"], c_s04["corrected_void"], c_s04["published_passed"]) == (True, True, None)
    assert (b_s14["judged_passed"], b_s14["published_passed"], b_s14["corrected_passed"]) == (False, False, True)
    corrections = pq.read_table(tmp_path / WEEK / "corrections.parquet").to_pylist()
    assert [(c["active_at_publication"], c["active_now"]) for c in corrections] == [(True, True)] * 2 + [
        (False, True)]


def test_columns_are_typed_and_documented_in_the_files_and_the_card(store, tmp_path):
    files = export(tmp_path)
    card = files["README.md"].decode()
    assert "license: cc-by-4.0" in card and "Cite as: CanItBuy AI agent ranking" in card
    assert documented_sql().strip() in card
    for name, columns in TABLES.items():
        schema = pq.read_schema(tmp_path / WEEK / f"{name}.parquet")
        assert schema.names == [c.name for c in columns]
        for column in columns:
            field = schema.field(column.name)
            assert field.metadata[b"description"].decode() == column.doc
            assert str(field.type) == {"string": "string", "int64": "int64", "float64": "double", "bool": "bool",
                                       "timestamp": "timestamp[us, tz=UTC]"}[column.type]
            assert f"| {column.name} |" in card
            assert f"| {column.name} | {column.type}" in DOCS.read_text()  # docs/dataset.md keeps up
        header = files[f"{name}.csv"].split(b"\n", 1)[0].decode()
        assert header == ",".join(f'"{c.name}"' for c in columns)
    metadata = pq.read_metadata(tmp_path / WEEK / "runs.parquet").metadata
    assert set(metadata) == {b"ARROW:schema"}  # nothing of the moment or the machine


def test_an_unpublished_week_is_one_clear_line(store, tmp_path, capsys):
    assert main(["dataset", "export", "--week", "2026-W47", "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == "canitbuy: week 2026-W47 has not been published"


def test_all_exports_every_published_week(store, tmp_path, capsys):
    settings, _, _ = store
    record = open_record(settings, clock=StepClock())
    write_week(record, {"a": 17}, week="2026-W49")
    publish_week(record, ReadModels(settings, record), PublishWeek(week="2026-W49", by="lead"))
    record.close()
    assert main(["dataset", "export", "--all", "--out", str(tmp_path / "all")]) == 0
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == [WEEK, "2026-W49"]
    assert pq.read_table(tmp_path / "all" / "2026-W49" / "runs.parquet").column("week").to_pylist() == ["2026-W49"] * 18
    assert capsys.readouterr().out.count("wrote") == 2
