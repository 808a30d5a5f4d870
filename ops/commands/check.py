"""`canitbuy check`: walk the whole store as a file-system check walks a disk (domain/eventlog/store_check.py says what
it checks); exit 1 naming the first problem. Run nightly, and after every restore (docs/operations.md)."""

from __future__ import annotations

import argparse

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.eventlog.store_check import StoreProblem, check_store
from ops.cli import CommandError
from ops.commands import HELP, Subcommands


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    check = subcommands.add_parser("check", help=HELP["check"])
    check.add_argument("--no-blobs", dest="blobs", action="store_false",
                       help="leave the blobs out (the log and the publications only)")
    check.set_defaults(handler=run_check)
    return check


def run_check(args: argparse.Namespace) -> int:
    with build_runtime(Settings.from_env(), args.clock) as runtime:
        blobs = runtime.blobs if args.blobs else None
        try:
            report = check_store(runtime.record.read_log, blobs)
        except StoreProblem as problem:
            raise CommandError(f"check failed: {problem}") from None
    where = f"blobs in {blobs.describe()}" if blobs is not None else "blobs not checked"
    print(f"ok: {report.events:,} events of {report.aggregates:,} aggregates decode with contiguous versions "
          f"({report.events_per_second:,.0f} events/s); {report.blobs:,} {where} are whole; "
          f"{report.publications:,} publications recompute to their recorded sha256")
    return 0
