"""`canitbuy web serve`: the public site and the staff desk, served by uvicorn in their own program (web/__main__)."""

from __future__ import annotations

import argparse
import os
import sys

from ops import arguments
from ops.commands import HELP, Subcommands


def host(text: str) -> str:
    """An address to bind; empty would bind every interface (and be announced as http://:PORT/), so it is refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty host would bind every interface: name one (0.0.0.0 for all)")
    return text.strip()


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    web = subcommands.add_parser("web", help=HELP["web"])
    sub = web.add_subparsers(dest="web_command", metavar="WEB_COMMAND", required=True)
    serve = sub.add_parser("serve", help="serve the site over HTTP (put TLS in front of it in production)")
    serve.add_argument("--host", type=host, default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=arguments.port, default=8000, help="port to bind (default 8000)")
    serve.set_defaults(handler=serve_site)
    return web


def serve_site(args: argparse.Namespace) -> int:
    """Hand this process over to the site's own program (`python -m web`): the same process id, so signals and
    supervisors reach uvicorn directly, and ops never imports the site."""
    sys.stdout.flush()
    sys.stderr.flush()
    program = [sys.executable, "-m", "web", "--host", args.host, "--port", str(args.port)]
    os.execv(sys.executable, program)  # noqa: S606 - our own interpreter and module, arguments parsed above
