"""The `canitbuy` command: one subcommand module per area, each in ops/commands/.

Exit codes: 0 ok, 1 failure, 2 usage. Errors are printed as one clear line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from adapters.settings import SettingsError
from domain.week.weeks import Clock, system_clock
from ops import commands


class CommandError(Exception):
    """A failure the user can act on; printed as one line, exit code 1."""


class UsageError(CommandError):
    """A command asked for something it may not do (e.g. runs for a week that is over); one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line: the command, what is wrong, and where help is."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


DASHED_VALUES = frozenset({"--own-key-id"})
"""Options whose value may begin with a dash: a keyid is a base64url thumbprint, and one in 64 begins with "-",
which argparse would take for an option of its own (`expected one argument`). Given as the next word, such a
value is joined to its option (`--own-key-id=VALUE`), as argparse reads it unambiguously."""


def join_dashed_values(arguments: Sequence[str]) -> list[str]:
    """The command line with each of DASHED_VALUES and the word after it joined into one `--option=value`."""
    joined: list[str] = []
    words = iter(arguments)
    for word in words:
        if word in DASHED_VALUES:
            value = next(words, None)
            joined.append(word if value is None else f"{word}={value}")
        else:
            joined.append(word)
    return joined


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; given the command line, only the parser of the command it names is built in full (its
    module imported), the others listed by their help line, so a command starts without importing every area."""
    parser = Parser(
        prog="canitbuy",
        description="CanItBuy: can AI shopping agents buy? The lab, the agent, the record and the site.",
    )
    # Subparsers are made with the parent's class, so every level errs on one line.
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    for name in commands.TOP_LEVEL:
        if named is None or named == name:
            importlib.import_module(f"ops.commands.{name}").add_parser(sub)
        else:
            sub.add_parser(name, help=commands.HELP[name])
    return parser


def one_line(error: BaseException) -> str:
    if isinstance(error, OSError) and error.filename and error.errno:  # the file and the system's words for why
        return f"{error.filename}: {os.strerror(error.errno).lower()}"
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _data_dir_problem(error: Exception) -> str | None:
    """When a command failed on a file or a database: whether the data folder is the cause (a file where it
    should be, a path that cannot be made, an embedded database that is not one), said as such rather than as
    the file the command happened to open first or SQLite's words alone."""
    import sqlite3
    from pathlib import Path

    from eventsourcing.persistence import PersistenceError

    from adapters.listening import data_dir_problem, sqlite_problem

    if not isinstance(error, OSError | sqlite3.DatabaseError | PersistenceError):
        return None
    folder = Path(os.environ.get("CANITBUY_DATA_DIR", "").strip() or "var")
    if isinstance(error, OSError):
        return data_dir_problem(folder)
    # eventsourcing's InterfaceError ("unable to open database file") names no file: the first that fails does
    return sqlite_problem(folder) or (
        f"the databases in {folder} (SQLite, CANITBUY_DATA_DIR) cannot be used: {one_line(error)}"
        if isinstance(error, PersistenceError)
        else None
    )


def _database_problem(error: Exception) -> str | None:
    """When a command failed on PostgreSQL (a pool that got no connection, psycopg's or eventsourcing's own
    words): why the database at CANITBUY_DATABASE_URL cannot be used, said as `web serve` and `worker --check`
    say it."""
    import psycopg
    from eventsourcing.persistence import PersistenceError

    from adapters.listening import DatabaseUnreachable

    if isinstance(error, DatabaseUnreachable):  # asked before the record was opened: the line is said already
        return str(error)
    url = os.environ.get("CANITBUY_DATABASE_URL", "").strip()
    if not url or not isinstance(error, psycopg.Error | PersistenceError):
        return None
    from adapters.listening import database_problem

    try:
        return database_problem(url) or f"the database (CANITBUY_DATABASE_URL) failed: {one_line(error)}"
    except Exception:  # noqa: BLE001 - the question is asked only to say the failure better
        return None


def main(argv: Sequence[str] | None = None, clock: Clock = system_clock) -> int:
    """Run one command; `clock` is the time commands that depend on it read (the week in progress), for tests."""
    arguments = join_dashed_values(sys.argv[1:] if argv is None else argv)
    args = build_parser(arguments).parse_args(arguments)
    args.clock = clock
    try:
        result = args.handler(args)
    except CommandError as error:
        print(f"canitbuy: {error}", file=sys.stderr)
        return 2 if isinstance(error, UsageError) else 1
    except SettingsError as error:  # a setting or a key file at fault, named in its message
        print(f"canitbuy: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("canitbuy: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the promise is one line, even for what no handler foresaw
        problem = _database_problem(error) or _data_dir_problem(error)
        print(
            f"canitbuy: {args.command}: {problem}"
            if problem
            else f"canitbuy: {args.command} failed: {one_line(error)}",
            file=sys.stderr,
        )
        return 1
    return int(result or 0)


if __name__ == "__main__":
    # Commands import ops.cli, not __main__: call the imported module's main so its CommandError is the one caught.
    from ops import cli

    sys.exit(cli.main())
