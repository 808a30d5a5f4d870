"""`canitbuy db migrate | rebuild | catch-up`: the read models' tables and their projection from the log."""

from __future__ import annotations

import argparse
import sys
import time

from adapters.settings import Settings
from adapters.sqldb import SqlDb
from adapters.wiring import build_runtime
from domain.eventlog.record import UndecodableEventError
from ops.cli import CommandError
from ops.commands import HELP, Subcommands


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    db = subcommands.add_parser("db", help=HELP["db"])
    sub = db.add_subparsers(dest="db_command", metavar="DB_COMMAND", required=True)
    sub.add_parser("migrate", help="apply the numbered SQL files in migrations/ not yet applied").set_defaults(
        handler=migrate
    )
    sub.add_parser("rebuild", help="empty the read models and project the whole log again").set_defaults(
        handler=lambda args: project(args, rebuild=True)
    )
    sub.add_parser("catch-up", help="project the events added since the last run").set_defaults(
        handler=lambda args: project(args, rebuild=False)
    )
    return db


def migrate(args: argparse.Namespace) -> int:
    applied = SqlDb(Settings.from_env()).migrate()
    print(f"applied {', '.join(applied)}" if applied else "the read models are up to date")
    return 0


def _progress(position: int, head: int) -> None:
    print(f"\r  position {position:,} of {head:,}", end="", file=sys.stderr, flush=True)


def project(args: argparse.Namespace, *, rebuild: bool) -> int:
    settings = Settings.from_env()
    with build_runtime(settings) as runtime:
        readmodels = runtime.readmodels
        started = time.perf_counter()
        try:
            position = (readmodels.rebuild if rebuild else readmodels.catch_up)(_progress)
        except UndecodableEventError as error:
            print(file=sys.stderr)
            raise CommandError(f"stopped: {error}") from None
        print(file=sys.stderr)
        print(f"read models at log position {position} ({time.perf_counter() - started:.1f} s)")
        return 0
