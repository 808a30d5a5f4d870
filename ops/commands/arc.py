"""`canitbuy arc run` and `canitbuy arc export`: ARC's task on an ARC-shaped test set, and its submission.

`arc run --test-set FILE [--ids a,b] --model NAME [--lab-url URL] [--json]` schedules one batch (an ArcBatch and
one run of kind "arc" a row, in one transaction), executes the runs here with the embedded pool (the same actor
the workers use), and prints each row's outcome and the batch id (on stderr as soon as the batch is recorded too,
so a stopped command's batch can still be exported). Before anything is recorded, each store off our lab gets
one HTTP request (at most 16 at once, 5 s each, progress on stderr): when fewer than 10 answer (fewer than one, for
a batch under 10 rows) the command exits 1 saying so and records nothing; otherwise rows on stores that did not
answer are cut short as our error with the reason, never given a result. `arc export BATCH [--outcomes FILE]` prints the
batch as an arc-leaderboard-submission/v1 object, checked against ARC's JSON Schema and our own parser first; an
ARC-100 batch's `no_cart` rows (code cannot read a real store's cart) need the outcome a person gave them (FILE).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from typing import Any, TextIO
from uuid import UUID

import anyio
import anyio.to_thread
import msgspec

from adapters.run_recorder import with_retries
from adapters.settings import Settings, SettingsError
from adapters.wiring import Runtime, build_runtime
from domain.courses.course import CURRENT_VERSION
from domain.leaderboards.arc import COURSE_TEST_SET, MIN_COUNTED, TestItem
from domain.leaderboards.arc_batches import ArcBatch, load_batch, schedule_batch
from domain.leaderboards.arc_export import arc_result, needs_review
from domain.week.weeks import week_of
from ops import arguments
from ops.arc_export import ExportRefused, batch_ends, check_export, export_batch
from ops.arc_files import (
    REACH_SECONDS,
    TestSetError,
    is_lab,
    pick,
    read_test_set,
    start_url,
    unreachable_stores,
)
from ops.cli import CommandError
from ops.commands import HELP, Subcommands
from ops.local_services import local_services
from workers.leases import open_leases
from workers.pool import EmbeddedPool
from workers.resources import build_resources


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    parser = subcommands.add_parser("arc", help=HELP["arc"])
    sub = parser.add_subparsers(dest="arc_command", metavar="ARC_COMMAND", required=True)
    run = sub.add_parser("run", help="run an agent on every row (or --ids) of a test set, as one batch")
    run.add_argument("--test-set", required=True,
                     help="CSV (id, host, product_url) or ARC's JSON; e.g. canitbuy-course-2.1.csv, arc-100.csv, "
                          "arc-100.json")
    run.add_argument("--ids", help="comma-separated ids to run (default every row)")
    run.add_argument("--model", required=True, type=arguments.model,
                     help="a built-in agent (baseline-robust, ...) or a line-up model")
    run.add_argument("--lab-url", type=arguments.http_url,
                     help="where the lab's stations answer (default CANITBUY_LAB_URL, else a lab started "
                          "in-process); course rows are pointed at it")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.set_defaults(handler=arc_run)
    export = sub.add_parser("export", help="print a batch as an arc-leaderboard-submission/v1 object")
    export.add_argument("batch", metavar="BATCH", type=arguments.uuid("a batch id, as `arc run` prints it"),
                        help="the batch id `arc run` printed")
    export.add_argument("--public-url", type=arguments.https_url, help="https base of the site for evidence addresses "
                                             "(default CANITBUY_PUBLIC_URL; unset leaves them out)")
    export.add_argument("--outcomes", metavar="FILE",
                        help="a CSV id,outcome: the outcome a person gave each no_cart row outside our lab (and "
                             "any blocked one) after reviewing its run's evidence (required when an ARC-100 batch "
                             "has no_cart rows)")
    export.set_defaults(handler=arc_export)
    return parser


def _settings(lab_url: str | None = None) -> Settings:
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise CommandError(str(error)) from None
    return msgspec.structs.replace(settings, lab_url=lab_url) if lab_url else settings


def arc_run(args: argparse.Namespace) -> int:
    try:
        found = read_test_set(args.test_set)
        items, test_set = pick(found, args.ids), found.name
    except TestSetError as error:
        raise CommandError(str(error)) from None
    settings = _settings(args.lab_url)
    with build_runtime(settings) as runtime, local_services(settings) as services:
        starts = [(item, start_url(item, services.lab_url, settings.lab_domain)) for item in items]
        unreachable = _reach(starts, settings.lab_domain)
        batch = _schedule(runtime, test_set, args.model, starts)
        print(f"batch {batch.id} recorded: {len(starts)} rows (canitbuy arc export {batch.id}, even if stopped)",
              file=sys.stderr, flush=True)
        began = time.monotonic()
        anyio.run(_execute, runtime, services.lab_url, services.directory_url, batch, starts, unreachable)
        with_retries(lambda: _finish(runtime, batch.id), "finishing the batch")
        rows = _rows(runtime, batch.id)
    _print(str(batch.id), test_set, args.model, rows, round(time.monotonic() - began, 1), args.json)
    return 0


def _reach(starts: list[tuple[TestItem, str]], lab_domain: str) -> dict[str, str]:
    """Why each store off our lab does not answer, by its start address, checked before anything is recorded; a
    CommandError when too few answer for the batch to be worth recording: ARC counts a run only with at least 10
    results, so a batch of 10 rows or more needs 10 stores that answer, a smaller one (a trial, never a
    submission) one. Our lab's rows are not checked: the command runs against that lab."""
    stores = [url for _, url in starts if not is_lab(url, lab_domain)]
    if not stores:
        return {}
    shown = _ReachProgress(len(stores), sys.stderr)
    unreachable = anyio.run(partial(unreachable_stores, stores, checked=shown))
    shown.end()
    answering = len(starts) - sum(1 for _, url in starts if url in unreachable)
    needed = MIN_COUNTED if len(starts) >= MIN_COUNTED else 1
    if answering < needed:
        first = next(unreachable[url] for _, url in starts if url in unreachable)
        first = first.removeprefix("store unreachable from this machine (").removesuffix(")")
        need = (f"ARC counts a run only with at least {MIN_COUNTED} results" if needed > 1
                else "nothing could run")
        raise CommandError(f"{answering} of {len(starts)} stores answer from this machine (one HTTP request each, "
                           f"{REACH_SECONDS:g} s; e.g. {first}); {need}, so no batch was recorded")
    return unreachable


class _ReachProgress:
    """The check's progress on stderr: one updating line on a terminal, else a line at each tenth and the end."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream, self.tty = total, stream, stream.isatty()
        self.step = max(1, total // 10)
        self.last = ""

    def __call__(self, done: int, reachable: int) -> None:
        self.last = f"checking the stores: {done} of {self.total} checked, {reachable} answer"
        if self.tty:
            self.stream.write("\r\033[K" + self.last)
        elif done % self.step == 0 or done == self.total:
            self.stream.write(self.last + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.tty and self.last:
            self.stream.write("\n")
            self.stream.flush()


def _schedule(runtime: Runtime, test_set: str, model: str, starts: list[tuple[TestItem, str]]) -> ArcBatch:
    now = runtime.record.clock()
    batch, runs = schedule_batch(test_set=test_set, model=model, items=starts, course_version=CURRENT_VERSION,
                                 week=week_of(now), requested_by="cli", at=now)
    runtime.record.save(batch, *runs)
    return batch


def _finish(runtime: Runtime, batch_id: UUID) -> None:
    batch = load_batch(runtime.record.repository, batch_id)
    assert batch is not None
    batch.finish(at=runtime.record.clock())
    runtime.record.save(batch)


async def _execute(runtime: Runtime, lab_url: str, directory_url: str | None, batch: ArcBatch,
                   starts: list[tuple[TestItem, str]], unreachable: dict[str, str]) -> None:
    to_run: list[str] = []
    for row, (_, url) in zip(batch.rows, starts, strict=True):
        why = unreachable.get(url)
        if why is None:
            to_run.append(row.run_id)
            continue
        await anyio.to_thread.run_sync(partial(runtime.record.cut_short_run, UUID(row.run_id), "our_error", why))
        _progress(row.id, "error", why)
    ids = {row.run_id: row.id for row in batch.rows}
    leases = open_leases(runtime.settings)
    resources = build_resources(runtime, leases, lab_url=lab_url, directory_url=directory_url)

    def done(run_id: str, word: str) -> None:
        run = runtime.record.get_run(UUID(run_id))
        outcome = run.verdict.arc if run.verdict and run.verdict.arc else ("error" if word == "cut_short" else word)
        _progress(ids[run_id], outcome or "error", f"{run.steps_recorded} steps")

    try:
        await EmbeddedPool(resources, runtime.settings.concurrency).run(to_run, done)
    finally:
        await resources.aclose()


def _progress(row_id: str, outcome: str, note: str) -> None:
    print(f"{row_id}: {outcome} ({note})", file=sys.stderr, flush=True)


def _rows(runtime: Runtime, batch_id: UUID) -> list[dict[str, Any]]:
    """Each row's ARC result with its run id and the reason in words."""
    batch, ends = batch_ends(runtime, batch_id)
    course = batch.test_set == COURSE_TEST_SET
    rows = []
    for row in batch.rows:
        end = ends.get(row.run_id)
        result = arc_result(row, end, course=course, evidence_base=None)
        rows.append({**result, "run_id": row.run_id, "reason": end.reason if end else "",
                     "needs_review": needs_review(end, course=course)})
    return rows


def _print(batch_id: str, test_set: str, model: str, rows: list[dict[str, Any]], seconds: float,
           as_json: bool) -> None:
    if as_json:
        print(json.dumps({"batch": batch_id, "test_set": test_set, "model": model, "seconds": seconds,
                          "results": rows}, sort_keys=True))
        return
    for row in rows:
        receipt = "  receipt" if row.get("receipt") else ""
        reason = f"  ({row['reason']})" if row["outcome"] in ("error", "blocked", "no_cart") else ""
        print(f"{row['id']:<14} {row['outcome']:<17} {row.get('steps', '-'):>3} steps  run {row['run_id']}"
              f"{receipt}{reason}")
    successes = sum(1 for r in rows if r["outcome"] in ("added_to_cart", "checkout_reached"))
    counted = sum(1 for r in rows if r["outcome"] not in ("error", "not_attempted"))
    print(f"{test_set} · {model}: cart success {successes} of {counted} in {seconds:g} s")
    review = sum(1 for r in rows if r["needs_review"])
    if review:
        print(f"{review} no_cart rows outside our lab need a person's review before export: "
              f"canitbuy arc export {batch_id} --outcomes FILE (a CSV id,outcome)")
    print(f"batch {batch_id}  (canitbuy arc export {batch_id} > submission.json)")


def arc_export(args: argparse.Namespace) -> int:
    batch_id = args.batch
    settings = _settings()
    base = args.public_url or settings.public_url
    if base and not base.startswith("https://"):
        raise CommandError("CANITBUY_PUBLIC_URL, the public base for evidence, must be an https:// address")
    with build_runtime(settings) as runtime:
        try:
            document = export_batch(runtime, batch_id, evidence_base=base, outcomes=args.outcomes)
        except (LookupError, ExportRefused) as error:
            raise CommandError(str(error)) from None
    problem = check_export(document, course=document["test_set"] == COURSE_TEST_SET)
    if problem:
        raise CommandError(f"the export is not a valid submission: {problem}")
    print(json.dumps(document, indent=1, ensure_ascii=False))
    return 0
