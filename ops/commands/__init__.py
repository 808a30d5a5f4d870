"""Subcommands of `canitbuy`, one module per area.

Each top-level module defines `add_parser(subcommands) -> ArgumentParser`: it adds its parser to the group it is
given (the public `add_parser` of the object `add_subparsers()` returned) and sets `handler` on each leaf with
`set_defaults`. A handler takes the parsed arguments and returns an exit code (0 when it returns None); it raises
`ops.cli.CommandError` for a failure the user can act on. A module that adds to another's group (week_run.py adds
`week run` and `week schedule`) is called by that module, so nothing reaches into argparse's private attributes.
"""

from __future__ import annotations

import argparse
from typing import Any, Protocol


class Subcommands(Protocol):
    """What `ArgumentParser.add_subparsers()` returns, as far as commands use it."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...


HELP = {
    "arc": "ARC's task on an ARC-shaped test set, and its submission",
    "audit": "export, verify and replay published weeks",
    "check": ("check the whole store: events decode, versions run on, blobs are whole, published weeks recompute; "
              "exit 1 naming the first problem"),
    "dataset": "export published weeks as the open dataset (Parquet, CSV)",
    "db": "the read models: migrate, rebuild, catch up",
    "lab": "the NORDLYS test store in 18 stations",
    "models": "the line-up's models behind the gateway",
    "run": "run one agent on one station, recorded like any run",
    "staff": "staff desk accounts",
    "traces": "the runs' kept Playwright traces: clean those kept until 3 December 2026",
    "web": "the public site and the staff desk",
    "week": "run, publish and inspect weeks",
    "worker": "execute runs from the queue (arq; needs CANITBUY_REDIS_URL)",
}
"""Each top-level command's one line in `canitbuy --help`, in the order it lists them. Kept here, not only in the
command's module, so `--help` and a command's own run import nothing but the module of the command asked for
(the modules import the browser, the database drivers and the dataset's Parquet writer: seconds, not
milliseconds)."""

TOP_LEVEL = tuple(HELP)
"""The modules `canitbuy` asks for a parser."""
