"""`canitbuy audit export | verify | replay`: auditors' access to published weeks (docs/audit-format.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.week.audit import AuditError, export_lines, is_provisional, verify_lines, week_events
from domain.week.publishing import NotPublishedError, UnknownWeekError
from ops import arguments
from ops.cli import CommandError
from ops.commands import HELP, Subcommands


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    audit = subcommands.add_parser("audit", help=HELP["audit"])
    sub = audit.add_subparsers(dest="audit_command", metavar="AUDIT_COMMAND", required=True)
    export = sub.add_parser("export", help="write the events a week's publication depended on (JSON Lines)")
    export.add_argument("--week", required=True, type=arguments.iso_week, help="ISO week, e.g. 2026-W48")
    export.add_argument("--out", required=True, type=Path, help="file to write, e.g. week.jsonl")
    export.add_argument("--publication", type=arguments.whole_number(1, 10_000), default=1,
                        help="which publication (1 = the first)")
    export.set_defaults(handler=export_week)
    verify = sub.add_parser("verify", help="recompute ranking and Matrix from the file alone and check hashes")
    verify.add_argument("file", type=Path)
    verify.set_defaults(handler=verify_file)
    replay = sub.add_parser("replay", help="print a week's ranking JSON replayed from the log")
    replay.add_argument("--week", required=True, type=arguments.iso_week, help="ISO week, e.g. 2026-W48")
    which = replay.add_mutually_exclusive_group()
    which.add_argument("--as-published", dest="as_published", action="store_true", default=True,
                       help="the first publication's bytes, replayed up to its position (default)")
    which.add_argument("--as-corrected", dest="as_published", action="store_false",
                       help="what the whole log says now, corrections applied")
    replay.add_argument("--matrix", action="store_true", help="print the Matrix instead of the ranking")
    replay.set_defaults(handler=replay_week)
    return audit



def export_week(args: argparse.Namespace) -> int:
    week, settings = args.week, Settings.from_env()
    with build_runtime(settings) as runtime:
        record, readmodels = runtime.record, runtime.readmodels
        readmodels.catch_up()
        publications = readmodels.publications(week)
        if not publications:
            raise CommandError(f"week {week} has not been published")
        if not 1 <= args.publication <= len(publications):
            raise CommandError(f"week {week} has {len(publications)} publication(s)")
        publication = publications[args.publication - 1]
        events = week_events(record.read_log, week, publication.position)
        with args.out.open("wb") as out:
            for line in export_lines(events, publication):
                out.write(line + b"\n")
        kind = " (provisional)" if publication.provisional else ""
        print(f"wrote {args.out}: {week}, publication {args.publication}{kind} at log position {publication.position}")
        return 0


def verify_file(args: argparse.Namespace) -> int:
    try:
        data = args.file.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {args.file}: {error.strerror}") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    try:
        docs = verify_lines(lines)
    except AuditError as error:
        raise CommandError(f"{args.file}: {error}") from None
    kind = (" (a provisional publication, made while the week was in progress; the week's final publication "
            "supersedes it)") if is_provisional(lines[0]) else ""
    print(f"{args.file}: verified {docs.week} at log position {docs.position}: ranking and Matrix hash as "
          f"published{kind}")
    return 0


def replay_week(args: argparse.Namespace) -> int:
    week, settings = args.week, Settings.from_env()
    with build_runtime(settings) as runtime:
        readmodels = runtime.readmodels
        readmodels.catch_up()
        try:
            docs = readmodels.published_documents(week) if args.as_published else readmodels.week_documents(week)
        except (UnknownWeekError, NotPublishedError) as error:
            raise CommandError(str(error)) from None
        sys.stdout.buffer.write((docs.matrix if args.matrix else docs.ranking) + b"\n")
        return 0
