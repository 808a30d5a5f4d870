"""`python -m web --host H --port P`: the public site and the staff desk as a program of their own.

`canitbuy web serve` hands its process over to this (ops never imports the site: the import contract in
pyproject.toml says so, and the process boundary keeps it). Errors are one line, as the CLI's are: the address
is bound and the database reached before uvicorn starts, so a busy port, a host that is not this machine's or a
database that does not answer is said in one line, exit 1, instead of uvicorn's log and a traceback (exit 3).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from typing import Any


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="canitbuy web serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)

    import uvicorn

    from adapters.listening import address, data_dir_problem, database_problem, listen, reason, sqlite_problem
    from adapters.settings import Settings, SettingsError
    from web.app import create_app
    from web.staff.session import SecretError, load_or_create_secret

    try:
        settings = Settings.from_env()
        problem = data_dir_problem(settings.data_dir)
        if problem:
            print(f"canitbuy: web serve: {problem}", file=sys.stderr)
            return 1
        # a short or empty secret stops the start here, in one line, rather than in the app's lifespan
        load_or_create_secret(settings.site_secret, settings.data_dir)
    except (SettingsError, SecretError) as error:
        print(f"canitbuy: {error}", file=sys.stderr)
        return 1
    where = address(args.host, args.port)
    try:
        listener = listen(args.host, args.port)
    except (OSError, OverflowError) as error:
        print(f"canitbuy: web serve: cannot listen on {where}: {reason(error)}", file=sys.stderr)
        return 1
    with listener:
        problem = database_problem(settings.database_url) or (
            None if settings.database_url else sqlite_problem(settings.data_dir))
        if problem:
            print(f"canitbuy: web serve: {problem}", file=sys.stderr)
            return 1
        print(f"canitbuy web: http://{where}/ (staff desk at /staff/)", flush=True)
        # One process: the site keeps its read models caught up from a single loop (see web/data.py).
        started = Startup(create_app(settings))
        config = uvicorn.Config(started, host=args.host, port=args.port, log_level="info",
                                proxy_headers=False, server_header=False)  # the app reads the proxy's (web/proxy.py)
        logging.getLogger("uvicorn.error").addFilter(started.unsaid)
        # Ctrl-C: uvicorn stops gracefully, then raises the SIGINT it caught again once it is done; that is the stop.
        with contextlib.suppress(KeyboardInterrupt, SystemExit):  # SystemExit: uvicorn's own, when the start failed
            uvicorn.Server(config).run(sockets=[listener])
    if started.failed:
        print(f"canitbuy: web serve: the site could not start: {started.failed}", file=sys.stderr)
        return 1
    return 0


class Startup:
    """The site with its start (the ASGI lifespan: the record opened, the read models migrated and caught up)
    said in one line when it fails (a database user that may not create the tables, ...), where Starlette hands
    uvicorn the traceback to log and uvicorn exits 3."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.failed: str | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "lifespan.startup.failed":
                message = {**message, "message": ""}  # the traceback: said in one line once the error is caught
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as error:
            if self.failed is None:
                self.failed = _one_line(error)
            raise

    def unsaid(self, record: logging.LogRecord) -> bool:
        """uvicorn's own words for the failure: ours are said instead."""
        return not (self.failed is not None and record.getMessage().startswith("Application startup failed"))


def _one_line(error: BaseException) -> str:
    """The error's first line, through what wrapped it (eventsourcing's ProgrammingError around psycopg's)."""
    cause = error.__cause__ or error
    lines = str(cause).strip().splitlines() or [type(cause).__name__]
    return lines[0]


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C before the site serves (while it imports or reaches the database)
        print("canitbuy: interrupted", file=sys.stderr)
        sys.exit(130)
