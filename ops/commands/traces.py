"""`canitbuy traces clean`: the traces runs kept until 3 December 2026, made their run's own (`ops/traces.py`).

Prints one line saying what it found and did. A trace missing from the blob store is left as it is and makes the
command exit 1 after the others are done (`canitbuy check` names every missing blob).
"""

from __future__ import annotations

import argparse
import sys

from ops.commands import HELP, Subcommands


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    traces = subcommands.add_parser("traces", help=HELP["traces"])
    sub = traces.add_subparsers(dest="traces_command", metavar="TRACES_COMMAND", required=True)
    clean = sub.add_parser(
        "clean", help="take out of every trace kept until 3 December 2026 the call stacks of the runs that shared "
                      "its browser (recorded as Run.TraceCleaned: the run offers the cleaned trace from then on)")
    clean.add_argument("--dry-run", action="store_true", help="say how many traces hold them; change nothing")
    clean.set_defaults(handler=run_clean)
    return traces


def run_clean(args: argparse.Namespace) -> int:
    from adapters.settings import Settings
    from adapters.wiring import build_runtime
    from ops.cli import CommandError
    from ops.traces import clean_traces

    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty and (done % 50 == 0 or done == total):
            print(f"\rchecked {done:,} of {total:,} traces", end="" if done < total else "\n", file=sys.stderr)

    with build_runtime(Settings.from_env(), args.clock) as runtime:
        found = clean_traces(runtime.record, runtime.blobs, dry_run=args.dry_run, progress=progress)
    parts = [f"{found.offered:,} traces offered", f"{found.clean_already:,} hold only their own run"]
    if args.dry_run:
        parts.append(f"{len(found.cleaned):,} hold the call stacks of the runs beside them")
        if found.withheld:
            parts.append(f"{len(found.withheld):,} are not readable zips and would be withheld")
    else:
        parts.append(f"{len(found.cleaned):,} cleaned (Run.TraceCleaned)")
        if found.withheld:
            parts.append(f"{len(found.withheld):,} not readable zips, withheld (Run.TraceCleaned, no trace)")
    if found.changed:
        parts.append(f"{len(found.changed):,} changed while this ran (run it again)")
    print(("dry run, nothing changed: " if args.dry_run else "ok: ") + "; ".join(parts))
    if found.missing:
        raise CommandError(f"{len(found.missing):,} traces are not in the blob store (run {found.missing[0]} "
                           "first); they are left as they are: `canitbuy check` names every missing blob")
    return 0
