"""`canitbuy web serve`: the public site and the staff desk, served by uvicorn."""

from __future__ import annotations

import argparse

from ops.commands import Subcommands


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    web = subcommands.add_parser("web", help="the public site and the staff desk")
    sub = web.add_subparsers(dest="web_command", metavar="WEB_COMMAND", required=True)
    serve = sub.add_parser("serve", help="serve the site over HTTP (put TLS in front of it in production)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    serve.add_argument("--proxy-headers", action="store_true",
                       help="trust X-Forwarded-For from the proxy in front (for rate limits per client address)")
    serve.set_defaults(handler=serve_site)
    return web


def serve_site(args: argparse.Namespace) -> int:
    import uvicorn

    from adapters.settings import Settings, SettingsError
    from ops.cli import CommandError
    from web.app import create_app

    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise CommandError(str(error)) from None
    print(f"canitbuy web: http://{args.host}:{args.port}/ (staff desk at /staff/)")
    # One process: the site keeps its read models caught up from a single loop (see web/data.py).
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info",
                proxy_headers=args.proxy_headers, server_header=False)
    return 0
