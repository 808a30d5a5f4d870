"""`canitbuy dataset export`: a published week's open dataset (docs/dataset.md) written to a folder.

Each week's files go to OUT/<week>/: runs, steps, verdicts, corrections and stations as Parquet and CSV, the card
(README.md) and SHA256SUMS. Exporting a release again gives the same bytes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from adapters.dataset import dataset_files, write_files
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.eventlog.record import Record
from domain.projections.dataset import week_dataset
from domain.week.publishing import NotPublishedError, replay
from ops import arguments
from ops.cli import CommandError
from ops.commands import HELP, Subcommands


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    dataset = subcommands.add_parser("dataset", help=HELP["dataset"])
    sub = dataset.add_subparsers(dest="dataset_command", metavar="DATASET_COMMAND", required=True)
    export = sub.add_parser("export", help="write a published week's tables, card and SHA256SUMS to OUT/<week>/")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--week", type=arguments.iso_week, help="ISO week, e.g. 2026-W48")
    which.add_argument("--all", action="store_true", help="every published week")
    export.add_argument("--out", type=Path, default=Path("dataset"), help="folder to write into (default: dataset)")
    export.set_defaults(handler=export_weeks)
    return dataset


def export_weeks(args: argparse.Namespace) -> int:
    chosen = args.week
    with build_runtime(Settings.from_env(), args.clock) as runtime:
        record = runtime.record
        weeks = [chosen] if chosen else published_weeks(record)
        if not weeks:
            raise CommandError("no week has been published yet")
        for week in weeks:
            try:
                dataset = week_dataset(record.read_log, week)
            except NotPublishedError as error:
                raise CommandError(str(error)) from None
            folder = args.out / week
            files = dataset_files(dataset)
            try:
                write_files(files, folder)
            except OSError as error:
                raise CommandError(f"cannot write {folder}: {error.strerror}") from None
            size = sum(len(f.data) for f in files)
            print(f"wrote {folder}: {week} release {dataset.release} (publication {dataset.publication_number}), "
                  f"{len(dataset.tables['runs'])} runs, {len(dataset.tables['steps'])} steps, {size} bytes")
        return 0


def published_weeks(record: Record) -> list[str]:
    state = replay(record.read_log)  # skims step payloads: only the publications are read here
    return sorted({p.week for p in state.publications})

