"""`canitbuy web serve`: the public site and the staff desk, served by uvicorn in their own program (web/__main__)."""

from __future__ import annotations

import argparse
import os
import sys

from ops.commands import HELP, Subcommands


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    web = subcommands.add_parser("web", help=HELP["web"])
    sub = web.add_subparsers(dest="web_command", metavar="WEB_COMMAND", required=True)
    serve = sub.add_parser("serve", help="serve the site over HTTP (put TLS in front of it in production)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=port_number, default=8000, help="port to bind (default 8000)")
    serve.set_defaults(handler=serve_site)
    return web


def port_number(text: str) -> int:
    """A TCP port to listen on, 1 to 65535. Checked here because the server would not refuse a larger one: the
    address lookup wraps it (99999 listens on 34463), so the port announced would not be the one served."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or not 1 <= int(digits) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number from 1 to 65535")
    return int(digits)


def serve_site(args: argparse.Namespace) -> int:
    """Hand this process over to the site's own program (`python -m web`): the same process id, so signals and
    supervisors reach uvicorn directly, and ops never imports the site."""
    sys.stdout.flush()
    sys.stderr.flush()
    program = [sys.executable, "-m", "web", "--host", args.host, "--port", str(args.port)]
    os.execv(sys.executable, program)  # noqa: S606 - our own interpreter and module, arguments parsed above
