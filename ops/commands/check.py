"""`canitbuy check`: walk the whole store as a file-system check walks a disk (domain/eventlog/store_check.py says what
it checks); exit 1 naming the first problem. Run nightly, and after every restore (docs/operations.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

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
    settings = Settings.from_env()
    data_dir = Path(settings.data_dir)
    if settings.database_url is None:  # SQLite: check the store that is there, never make one
        ancestors_are_folders = all(parent.is_dir() for parent in data_dir.parents if parent.exists())
        if not data_dir.exists() and ancestors_are_folders:  # a file in the way is said as every command says it
            raise CommandError(f"check failed: no data folder {data_dir} (CANITBUY_DATA_DIR): there is no store")
        if data_dir.is_dir() and not (data_dir / "canitbuy.sqlite3").is_file():
            raise CommandError(f"check failed: no event store {data_dir / 'canitbuy.sqlite3'} in the data folder")
        if data_dir.is_dir() and (data_dir / "canitbuy.sqlite3").stat().st_size == 0:
            raise CommandError(f"check failed: the event store {data_dir / 'canitbuy.sqlite3'} is empty (0 bytes)")
    with build_runtime(settings, args.clock) as runtime:
        blobs = runtime.blobs if args.blobs else None
        try:
            report = check_store(runtime.record.read_log, blobs)
        except StoreProblem as problem:
            raise CommandError(f"check failed: {problem}") from None
        head = runtime.record.head_position()
        if settings.database_url is not None or (data_dir / "readmodels.sqlite3").is_file():
            projected = runtime.readmodels.position()
            if projected > head:
                raise CommandError(
                    f"check failed: the read models are at log position {projected} but the log ends at {head}: "
                    "they hold events the log does not have (a log lost or restored from an older backup); "
                    "restore the log, or run canitbuy db rebuild if this log is the one to keep")
    where = f"blobs in {blobs.describe()}" if blobs is not None else "blobs not checked"
    print(f"ok: {report.events:,} events of {report.aggregates:,} aggregates decode with contiguous versions "
          f"({report.events_per_second:,.0f} events/s); {report.blobs:,} {where} are whole; "
          f"{report.publications:,} publications recompute to their recorded sha256")
    return 0
