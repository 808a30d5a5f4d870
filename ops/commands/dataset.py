"""`canitbuy dataset export`: a published week's open dataset (docs/dataset.md) written to a folder.

Each week's files go to OUT/<week>/: runs, steps, verdicts, corrections and stations as Parquet and CSV, the card
(README.md) and SHA256SUMS. Exporting a release again gives the same bytes. A week's files are written whole or
not at all (ops.files.write_all_whole), and never into the data folder.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from adapters.dataset import dataset_files
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.eventlog.record import Record
from domain.projections.dataset import week_dataset
from domain.week.publishing import NotPublishedError, replay
from ops import arguments
from ops.cli import CommandError, UsageError
from ops.commands import HELP, Subcommands
from ops.files import cannot_write, file_path, refuse_inside_data_folder, write_all_whole


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    dataset = subcommands.add_parser("dataset", help=HELP["dataset"])
    sub = dataset.add_subparsers(dest="dataset_command", metavar="DATASET_COMMAND", required=True)
    export = sub.add_parser("export", help="write a published week's tables, card and SHA256SUMS to OUT/<week>/")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--week", type=arguments.iso_week, help="ISO week, e.g. 2026-W48")
    which.add_argument("--all", action="store_true", help="every published week")
    export.add_argument("--out", type=file_path, default=Path("dataset"),
                        help="folder to write into (default: dataset; outside the data folder; each week's files "
                        "written whole or not at all)")
    export.set_defaults(handler=export_weeks)
    return dataset


def export_weeks(args: argparse.Namespace) -> int:
    chosen, settings = args.week, Settings.from_env()
    refuse_inside_data_folder(args.out, settings, "dataset export")
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"dataset export: --out {args.out} is a file; name a folder")
    with build_runtime(settings, args.clock) as runtime:
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
            refuse_inside_data_folder(folder, settings, "dataset export")  # the data folder may be OUT/<week>
            files = dataset_files(dataset)
            write_week(folder, [(folder / f.name, f.data) for f in files])
            size = sum(len(f.data) for f in files)
            print(f"wrote {folder}: {week} release {dataset.release} (publication {dataset.publication_number}), "
                  f"{len(dataset.tables['runs'])} runs, {len(dataset.tables['steps'])} steps, {size} bytes")
        return 0


def write_week(folder: Path, files: list[tuple[Path, bytes]]) -> None:
    """The week's folder (made if need be, and removed again if nothing could be written in it) and its files,
    whole or not at all."""
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CommandError(f"cannot write {folder}: a file is in its place") from None
    except OSError as error:
        raise cannot_write(folder, error) from None
    try:
        write_all_whole(files)
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def published_weeks(record: Record) -> list[str]:
    state = replay(record.read_log)  # skims step payloads: only the publications are read here
    return sorted({p.week for p in state.publications})

