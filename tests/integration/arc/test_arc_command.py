"""`canitbuy arc run` and `canitbuy arc export` as a user runs them: their own processes, a lab started by the
command, built-in agents in real Chromium. The export is what ARC's schema, our submission service's parser and
our receipt check all accept; a tampered receipt in it is refused."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

import anyio
import jsonschema
import pytest

from adapters.receipts import HttpxReceiptVerifier
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.runs import Run
from domain.leaderboards.arc import COURSE_TEST_SET, Submission
from domain.leaderboards.arc_batches import load_batch
from domain.leaderboards.arc_schema import course_schema
from domain.leaderboards.arc_validation import parse_submission
from domain.leaderboards.receipt_ledger import KeyRegistration
from domain.leaderboards.receipts import ReceiptCheck, ReceiptRefused, ReceiptVerified
from domain.leaderboards.verification import can_check_receipts, judge_receipts
from lab.receipts import load_or_create_seed
from lab.server import LabServer
from ops.arc_export import arc_schema, check_export, export_batch
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

pytestmark = pytest.mark.chromium
ROOT = Path(__file__).parents[3]
# Ten stations and more (ARC counts a run only with at least 10 results), the quick ones, with those whose ARC
# outcomes differ: s01 the control and s13 the bot gate (the harness signs) reach checkout; s14 (pickup point
# only on a map) leaves the product in the cart, and so does s10 (the agent stops at the sign-in page the
# checkout asks for, after the cart).
IDS = ("s01", "s02", "s04", "s05", "s06", "s07", "s10", "s13", "s14", "s15", "s17")
EXPECTED = {code: "checkout_reached" for code in IDS} | {"s10": "added_to_cart", "s14": "added_to_cart"}
PUBLIC = "https://canitbuy.com"


def canitbuy(data_dir: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    env["CANITBUY_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "ops.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("arc")


@pytest.fixture(scope="module")
def batch(data_dir: Path) -> dict[str, Any]:
    done = canitbuy(data_dir, "arc", "run", "--test-set", "canitbuy-course-2.1.csv", "--ids", ",".join(IDS),
                    "--model", "baseline-robust", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def export(batch: dict[str, Any], data_dir: Path) -> dict[str, Any]:
    done = canitbuy(data_dir, "arc", "export", batch["batch"], "--public-url", PUBLIC)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def same_lab(data_dir: Path) -> Iterator[LabServer]:
    """A lab signing with the key the command's lab used (kept in the data dir): the keys we trust."""
    with LabServer(trust_local_directories=True, receipt_key=load_or_create_seed(data_dir / "lab-receipt.key")) as lab:
        yield lab


def verify_all(lab: LabServer, export: dict[str, Any]) -> dict[str, ReceiptCheck]:
    verifier = HttpxReceiptVerifier(lab.url_for(None))

    async def check() -> dict[str, ReceiptCheck]:
        return {r["id"]: await verifier.verify(r["receipt"], r["id"]) for r in export["results"] if "receipt" in r}

    return anyio.run(check)


def registered_before_the_run(submission: Submission, checks: dict[str, ReceiptCheck]) -> dict[str, KeyRegistration]:
    """The registration staff would have recorded of our agent's key (the harness signs every request) a day before
    the run: without one, no receipt proves a run."""
    started = datetime.fromisoformat((submission.run.started_at or "").replace("Z", "+00:00"))
    keyids = {c.agent_keyid for c in checks.values() if isinstance(c, ReceiptVerified) and c.agent_keyid}
    return {k: KeyRegistration(keyid=k, agent=submission.agent.name, registered_at=started - timedelta(days=1))
            for k in keyids}


def test_arc_run_records_arcs_outcome_for_every_row(batch: dict[str, Any], data_dir: Path) -> None:
    assert batch["test_set"] == COURSE_TEST_SET and batch["model"] == "baseline-robust"
    assert {r["id"]: r["outcome"] for r in batch["results"]} == EXPECTED
    for row in batch["results"]:
        assert row["run_id"] and row["steps"] >= 1 and row["reason"]
        assert ("receipt" in row) == (row["outcome"] == "checkout_reached")
    assert any((data_dir / "blobs").rglob("*"))  # the screenshots went to the blob store


def test_the_export_is_valid_for_arcs_schema_and_our_submission_service(export: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(course_schema(), format_checker=jsonschema.FormatChecker()).validate(export)
    submission = parse_submission(json.dumps(export).encode())
    assert submission.test_set == COURSE_TEST_SET and submission.run.stopped_before_payment is True
    assert submission.agent.path == "browser" and submission.agent.builder == "CanItBuy"
    assert submission.agent.model == "baseline-robust"
    assert {r.id: r.outcome for r in submission.results} == EXPECTED
    assert all(r.evidence_url and r.evidence_url.startswith(f"{PUBLIC}/runs/") for r in submission.results)


def test_an_arc_100_shaped_export_of_the_same_rows_passes_arcs_own_schema_but_for_its_test_set(
    export: dict[str, Any],
) -> None:
    # ARC's schema as published fixes test_set and the ids to ARC-100 v1; everything else of ours fits it as is.
    errors = {e.validator for e in jsonschema.Draft202012Validator(arc_schema()).iter_errors(export)}
    assert errors <= {"const", "pattern"}


def test_the_receipts_of_a_course_export_verify_with_the_labs_keys(export: dict[str, Any],
                                                                   same_lab: LabServer) -> None:
    checks = verify_all(same_lab, export)
    assert set(checks) == {code for code, outcome in EXPECTED.items() if outcome == "checkout_reached"}
    assert all(isinstance(c, ReceiptVerified) and c.station == code for code, c in checks.items())
    assert all(isinstance(c, ReceiptVerified) and c.agent_keyid for c in checks.values())  # the harness signs
    submission = parse_submission(json.dumps(export).encode())
    # What the staff desk does: every success must carry a receipt to be checked; the carts of s10 and s14 have none.
    assert not can_check_receipts(submission)
    judgement = judge_receipts(submission, checks, registered_before_the_run(submission, checks), {})
    assert not judgement.verified and judgement.checks["s14"] == judgement.checks["s10"] == "no receipt"
    assert all(judgement.checks[code] == "receipt valid" for code in checks)


def test_the_receipts_of_a_course_export_of_checkouts_only_hold(export: dict[str, Any],
                                                                       same_lab: LabServer) -> None:
    checkouts = {**export, "results": [r for r in export["results"] if r["outcome"] != "added_to_cart"]}
    checkouts["results"].append({"id": "s03", "outcome": "no_cart"})  # still ten results
    submission = parse_submission(json.dumps(checkouts).encode())
    assert can_check_receipts(submission)
    checks = verify_all(same_lab, checkouts)
    judgement = judge_receipts(submission, checks, registered_before_the_run(submission, checks), {})
    assert judgement.verified and judgement.agreed == judgement.of == 9, judgement.reason


def tampered(compact: str) -> str:
    head, body, signature = compact.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["order"]["total_cents"] -= 1000
    payload["order_sha256"] = "0" * 64
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    return f"{head}.{forged}.{signature}"


def test_a_tampered_receipt_in_an_export_is_refused(export: dict[str, Any], same_lab: LabServer) -> None:
    results = [dict(r) for r in export["results"]]
    s01 = next(r for r in results if r["id"] == "s01")
    s01["receipt"] = tampered(s01["receipt"])
    forged = {**export, "results": results}
    assert check_export(forged, course=True) is None  # well-formed: only the signature tells
    checks = verify_all(same_lab, forged)
    assert isinstance(checks["s01"], ReceiptRefused) and checks["s01"].reason == "bad_signature"
    submission = parse_submission(json.dumps(forged).encode())
    judgement = judge_receipts(submission, checks, registered_before_the_run(submission, checks), {})
    assert not judgement.verified and "s01: receipt refused (bad_signature" in judgement.reason


def test_an_export_with_fewer_than_ten_results_is_refused_with_the_first_problem(export: dict[str, Any]) -> None:
    short = {**export, "results": export["results"][:3]}
    assert check_export(short, course=True) == "results: fails minItems 10 (ARC's JSON Schema)"


def test_exporting_an_unknown_batch_exits_1_with_one_line(data_dir: Path) -> None:
    done = canitbuy(data_dir, "arc", "export", "5556ad30-83e9-4e9f-bdc3-b1b873d392c4", timeout=60)
    assert done.returncode == 1 and done.stderr.strip() == "canitbuy: no ARC batch 5556ad30-83e9-4e9f-bdc3-b1b873d392c4"


def test_a_trial_on_stores_out_of_reach_records_nothing(tmp_path: Path) -> None:
    """This machine reaches no real store: the stores are checked before the batch is recorded (one HTTP request
    each), and with none answering nothing runs (tests/integration/arc/test_arc_reach.py has the rules)."""
    done = canitbuy(tmp_path, "arc", "run", "--test-set", "arc-100.csv", "--ids", "arc100-v1-001,arc100-v1-002",
                    "--model", "baseline-robust", "--json", timeout=120)
    assert done.returncode == 1 and not done.stdout, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("canitbuy: 0 of 2 stores answer from this machine")
    assert "nothing could run, so no batch was recorded" in done.stderr


def events_by_row(data_dir: Path, batch: dict[str, Any]) -> dict[str, list[Any]]:
    with build_runtime(Settings(data_dir=data_dir)) as runtime:
        store = runtime.record.repository.event_store
        return {r["id"]: list(store.get(UUID(r["run_id"]))) for r in batch["results"]}


def test_each_rows_evidence_shows_its_outcome_not_the_page_before_it(batch: dict[str, Any], export: dict[str, Any],
                                                                     data_dir: Path) -> None:
    events = events_by_row(data_dir, batch)
    run_ids = {r["id"]: r["run_id"] for r in batch["results"]}
    served: dict[str, int] = {}
    settings = Settings(data_dir=data_dir, site_secret="test secret " * 4)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        for result in export["results"]:
            path = urlsplit(result["evidence_url"]).path
            assert path.startswith(f"/runs/{run_ids[result['id']]}/blobs/")
            answer = client.get(path)
            assert answer.headers["content-type"] == "image/jpeg", result["id"]
            served[result["id"]] = answer.status_code
    assert set(served.values()) == {200}  # every evidence address opens on our site
    for result in export["results"]:
        shown = result["evidence_url"].rsplit("/", 1)[-1]
        steps = [e.step for e in events[result["id"]] if isinstance(e, Run.StepRecorded)]
        [kept] = [e for e in events[result["id"]] if isinstance(e, Run.MediaKept)]
        if result["outcome"] == "checkout_reached":
            # The screen as the run left it: the checkout, which no step's screenshot (taken before its action) shows.
            assert shown == kept.screens[-1].screenshot and shown not in {s.screenshot for s in steps}, result["id"]
        else:
            # The cart page whose marker credited the product: a step observed on the lab's /cart, "Your cart".
            [step] = [s for s in steps if s.screenshot == shown][-1:]
            assert urlsplit(step.url).path == "/cart" and step.title.startswith("Your cart"), result["id"]
    # s10: the agent stopped on the sign-in page after the cart; the evidence is the cart, not that page.
    s10 = [e.step for e in events["s10"] if isinstance(e, Run.StepRecorded)]
    assert urlsplit(s10[-1].url).path != "/cart"
    assert export["results"][IDS.index("s10")]["evidence_url"].rsplit("/", 1)[-1] != s10[-1].screenshot


def test_a_stopped_batch_is_named_at_once_and_its_started_rows_are_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    env["CANITBUY_DATA_DIR"] = str(tmp_path)
    process = subprocess.Popen([sys.executable, "-m", "ops.cli", "arc", "run", "--test-set",
                                "canitbuy-course-2.1.csv", "--model", "baseline-robust"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        seen, batch_id = [], None
        for line in process.stderr:  # the batch is named before any row ends
            seen.append(line)
            found = re.match(r"batch (\S+) recorded: 18 rows \(canitbuy arc export \1, even if stopped\)$", line)
            batch_id = batch_id or (found and found[1])
            if re.match(r"s\d\d: ", line):
                assert batch_id, seen
                break
        process.send_signal(signal.SIGINT)  # as Ctrl-C stops it, while rows are running
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130 and "Traceback" not in err and err.strip().endswith("canitbuy: interrupted")
    assert batch_id and batch_id not in out  # stdout's table never came: stderr named the batch
    with build_runtime(Settings(data_dir=tmp_path)) as runtime:
        document = export_batch(runtime, UUID(batch_id), evidence_base=None)
        store = runtime.record.repository.event_store
        batch = load_batch(runtime.record.repository, UUID(batch_id))
        assert batch is not None
        kinds = {row.id: {type(e).__name__ for e in store.get(UUID(row.run_id))} for row in batch.rows}
    outcomes = {r["id"]: r["outcome"] for r in document["results"]}
    started = {i for i, names in kinds.items() if "Started" in names and not names & {"Finished", "CutShort"}}
    assert started, kinds  # the rows the pool was running when the command stopped
    assert {outcomes[i] for i in started} == {"error"}  # ARC: "the agent's own run broke"; left out of n
    never = {i for i, names in kinds.items() if "Started" not in names}
    assert never and {outcomes[i] for i in never} == {"not_attempted"}
