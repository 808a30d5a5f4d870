"""`canitbuy arc export` of an ARC-100 batch: code reads no real store's cart, so its `no_cart` rows are exported
only with the outcome a person gave them (`--outcomes FILE`); without one the command exits 1 saying how many
rows need review and how to give them. The batch is recorded in a real store (SQLite in a data dir) with the
domain's own commands, as `arc run` on a machine that reaches the stores would have left it (this machine reaches
none); the command runs in its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import jsonschema
import pytest

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.ports import StepRecord
from domain.agent.verdicts import Verdict
from domain.courses.course import CURRENT_VERSION
from domain.leaderboards import arc
from domain.leaderboards.arc import ARC_TEST_SET, COURSE_TEST_SET, arc_100_v1, course_test_set
from domain.leaderboards.arc_batches import schedule_batch
from domain.leaderboards.arc_schema import arc_schema
from domain.leaderboards.arc_validation import parse_submission
from domain.week.weeks import week_of
from ops.arc_export import check_export

ROOT = Path(__file__).parents[3]
ITEMS = list(arc_100_v1().items)[:12]
IDS = [item.id for item in ITEMS]
NO_CART = IDS[:10]
BLOCKED, ERROR = IDS[10], IDS[11]


def canitbuy(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    env["CANITBUY_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "ops.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def record_batch(data_dir: Path, items: list[arc.TestItem], starts: list[str], ends: dict[str, str]) -> str:
    """A finished batch whose runs ended as `ends` says (by row id: no_cart, blocked or error), each after one
    step on its store; returns the batch id."""
    with build_runtime(Settings(data_dir=data_dir)) as runtime:
        record = runtime.record
        now = record.clock()
        batch, runs = schedule_batch(test_set=ARC_TEST_SET if items[0].id.startswith("arc") else COURSE_TEST_SET,
                                     model="baseline-robust", items=list(zip(items, starts, strict=True)),
                                     course_version=CURRENT_VERSION, week=week_of(now), requested_by="test", at=now)
        record.save(batch, *runs)
        for item, run, start in zip(items, runs, starts, strict=True):
            record.start_run(run.id, worker="test", browser_version="chromium", agent_version="agent 1")
            record.record_steps(run.id, [StepRecord(number=1, url=start, title=item.name, result="ok")])
            if ends[item.id] == "error":
                record.cut_short_run(run.id, "our_error", "the browser crashed", steps=1, seconds=3.0)
                continue
            verdict = Verdict(passed=False, outcome="stopped", stage="entry", step=1, arc=ends[item.id],  # type: ignore[arg-type]
                              reason="the product did not reach a cart code can read: the agent stopped")
            record.finish_run(run.id, verdict, steps=1, seconds=12.5)
        batch.finish(at=record.clock())
        record.save(batch)
        return str(batch.id)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("arc-review")


@pytest.fixture(scope="module")
def batch(data_dir: Path) -> str:
    ends = {i: "no_cart" for i in NO_CART} | {BLOCKED: "blocked", ERROR: "error"}
    return record_batch(data_dir, ITEMS, [item.product_url for item in ITEMS], ends)


def outcomes(path: Path, rows: list[tuple[str, str]], header: str = "id,outcome", bom: bool = False) -> Path:
    path.write_text(("\ufeff" if bom else "") + "\n".join([header, *(f"{i},{o}" for i, o in rows)]) + "\n",
                    encoding="utf-8")
    return path


def failure(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1 and not done.stdout, (done.returncode, done.stdout)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_an_arc_100_batch_with_no_cart_rows_is_not_exported_without_a_persons_review(data_dir: Path,
                                                                                     batch: str) -> None:
    assert failure(canitbuy(data_dir, "arc", "export", batch)) == (
        "canitbuy: 10 rows need a person's review (arc100-v1-001, arc100-v1-002, arc100-v1-003, ...): no_cart by "
        "code on stores without the lab's markers, where code cannot read the cart; give the outcome each run's "
        "evidence shows with --outcomes FILE (a CSV id,outcome)")


def test_the_outcomes_a_person_gave_are_exported_and_the_notes_say_how_many(data_dir: Path, batch: str,
                                                                            tmp_path: Path) -> None:
    given = [(i, "added_to_cart") for i in NO_CART[:4]] + [(NO_CART[4], "Checkout_Reached")]
    given += [(i, "no_cart") for i in NO_CART[5:9]] + [(NO_CART[9], "blocked")]
    done = canitbuy(data_dir, "arc", "export", batch, "--outcomes", str(outcomes(tmp_path / "r.csv", given, bom=True)),
                    "--public-url", "https://canitbuy.com")
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    jsonschema.Draft202012Validator(arc_schema(), format_checker=jsonschema.FormatChecker()).validate(document)
    submission = parse_submission(done.stdout.encode())
    got = {r.id: r.outcome for r in submission.results}
    assert got == {i: o.lower() for i, o in given} | {BLOCKED: "blocked", ERROR: "error"}
    assert "10 of 12 results (every no_cart by code, 0 blocked by code) were reviewed by a person" in (
        document["run"]["notes"])
    assert all(r.get("evidence_url") is None for r in document["results"])  # the steps recorded no screenshot


def test_a_person_may_review_a_blocked_row_too_and_the_notes_count_it(data_dir: Path, batch: str,
                                                                     tmp_path: Path) -> None:
    """Code reads a real store's challenge from its page and can be wrong (a captcha notice on a cart page read as a
    wall): a person who looked at the run's evidence may give a blocked row its outcome, recorded like the others."""
    given = [(i, "no_cart") for i in NO_CART] + [(BLOCKED, "added_to_cart")]
    done = canitbuy(data_dir, "arc", "export", batch, "--outcomes", str(outcomes(tmp_path / "b.csv", given)))
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    got = {r["id"]: r["outcome"] for r in document["results"]}
    assert got[BLOCKED] == "added_to_cart" and got[ERROR] == "error"
    assert "11 of 12 results (every no_cart by code, 1 blocked by code) were reviewed by a person" in (
        document["run"]["notes"])
    assert parse_submission(done.stdout.encode()).successes() == 1


def test_a_partial_review_still_says_how_many_rows_are_left(data_dir: Path, batch: str, tmp_path: Path) -> None:
    given = [(i, "no_cart") for i in NO_CART[:9]]
    line = failure(canitbuy(data_dir, "arc", "export", batch, "--outcomes", str(outcomes(tmp_path / "p.csv", given))))
    assert line.startswith("canitbuy: 1 row needs a person's review (arc100-v1-010): ")


@pytest.mark.parametrize(("rows", "header", "expected"), [
    ([("arc100-v1-050", "no_cart")], "id,outcome", "row 2: 'arc100-v1-050' is not a row of batch {batch}"),
    ([("arc100-v1-001", "in_cart")], "id,outcome",
     "row 2: outcome 'in_cart' for arc100-v1-001 must be one of added_to_cart, checkout_reached, no_cart, "
     "blocked, error, not_attempted"),
    ([("arc100-v1-001", "no_cart"), ("arc100-v1-001", "blocked")], "id,outcome", "row 3: arc100-v1-001 appears twice"),
    ([("arc100-v1-012", "added_to_cart")], "id,outcome",
     "row 2: arc100-v1-012 is error as code decided it and stands (only no_cart and blocked rows outside our lab "
     "are reviewed)"),
    ([("arc100-v1-001", "no_cart")], "id,result", "the CSV lacks the column(s) outcome (it needs id,outcome)"),
])
def test_each_problem_in_the_outcomes_file_is_one_line_naming_the_file_and_row(
    data_dir: Path, batch: str, tmp_path: Path, rows: list[tuple[str, str]], header: str, expected: str,
) -> None:
    path = outcomes(tmp_path / "bad.csv", rows, header)
    line = failure(canitbuy(data_dir, "arc", "export", batch, "--outcomes", str(path)))
    assert line == f"canitbuy: {path}: {expected.format(batch=batch)}"


def test_a_missing_outcomes_file_is_one_line(data_dir: Path, batch: str, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "r.csv"
    assert failure(canitbuy(data_dir, "arc", "export", batch, "--outcomes", str(missing))) == (
        f"canitbuy: --outcomes: no file '{missing}'")


def test_a_course_batch_takes_no_reviewed_outcomes(data_dir: Path, tmp_path: Path) -> None:
    items = list(course_test_set().items)[:10]
    course = record_batch(data_dir, items, [item.product_url for item in items], {i.id: "no_cart" for i in items})
    done = canitbuy(data_dir, "arc", "export", course)  # unchanged: the lab's markers judged it
    assert done.returncode == 0, done.stderr
    assert {r["outcome"] for r in json.loads(done.stdout)["results"]} == {"no_cart"}
    path = outcomes(tmp_path / "c.csv", [("s01", "added_to_cart")])
    assert failure(canitbuy(data_dir, "arc", "export", course, "--outcomes", str(path))) == (
        f"canitbuy: {path}: row 2: s01 is no_cart as code decided it and stands (it ran on our lab, judged by "
        "its markers)")


def test_a_batch_recorded_with_arc_100_ids_on_other_stores_is_not_exported(data_dir: Path) -> None:
    # What a test-set file could do before rows were checked against the frozen set (ops/arc_files.py).
    lab = [arc.TestItem(item.id, item.host, f"https://s{n:02d}.lab.canitbuy.com/products/aero-run-2")
           for n, item in enumerate(ITEMS, start=1)]
    fake = record_batch(data_dir, lab, [item.product_url for item in lab], {i: "no_cart" for i in IDS})
    line = failure(canitbuy(data_dir, "arc", "export", fake))
    assert line.startswith(f"canitbuy: batch {fake} ran a store that is not ARC-100 v1's under its id: product_url "
                           "'https://s01.lab.canitbuy.com/products/aero-run-2' is not ")
    assert line.endswith("; not exported")
    assert UUID(fake)


def test_the_exports_schema_check_checks_format_uri(data_dir: Path, batch: str, tmp_path: Path) -> None:
    # ARC's schema says `"format": "uri"` for evidence_url and agent.url; jsonschema checks it only with a URI
    # package installed (rfc3986-validator, a dependency), else it passes anything matching ^https://.
    assert "uri" in jsonschema.FormatChecker().checkers
    given = [(i, "no_cart") for i in NO_CART]
    done = canitbuy(data_dir, "arc", "export", batch, "--outcomes", str(outcomes(tmp_path / "all.csv", given)),
                    "--public-url", "https://canitbuy.com")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    document["results"][0]["evidence_url"] = "https://canitbuy.com/runs/a b|c"
    assert check_export(document, course=False) == (
        "results.0.evidence_url: 'https://canitbuy.com/runs/a b|c' is not a 'uri' (ARC's JSON Schema)")
