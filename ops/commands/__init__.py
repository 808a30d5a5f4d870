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


TOP_LEVEL = ("arc", "audit", "check", "dataset", "db", "lab", "models", "run", "staff", "web", "week", "worker")
"""The modules `canitbuy` asks for a parser, in the order `--help` lists them."""
