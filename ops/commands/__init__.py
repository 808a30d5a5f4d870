"""Subcommands of `canitbuy`. Each module defines `register(subparsers)`; its parser sets `handler`.

A handler takes the parsed arguments and returns an exit code (0 when it returns None); it raises
`ops.cli.CommandError` for a failure the user can act on.
"""
