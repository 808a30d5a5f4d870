"""`python -m web --host H --port P`: the public site and the staff desk as a program of their own.

`canitbuy web serve` hands its process over to this (ops never imports the site: the import contract in
pyproject.toml says so, and the process boundary keeps it). Errors are one line, as the CLI's are: the address
is bound and the database reached before uvicorn starts, so a busy port, a host that is not this machine's or a
database that does not answer is said in one line, exit 1, instead of uvicorn's log and a traceback (exit 3).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

CONNECT_SECONDS = 5
"""How long the database may take to answer at start."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="canitbuy web serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)

    import uvicorn

    from adapters.settings import Settings, SettingsError
    from web.app import create_app
    from web.staff.session import SecretError, load_or_create_secret

    try:
        settings = Settings.from_env()
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
        problem = database_problem(settings.database_url)
        if problem:
            print(f"canitbuy: web serve: {problem}", file=sys.stderr)
            return 1
        print(f"canitbuy web: http://{where}/ (staff desk at /staff/)", flush=True)
        # One process: the site keeps its read models caught up from a single loop (see web/data.py).
        config = uvicorn.Config(create_app(settings), host=args.host, port=args.port, log_level="info",
                                proxy_headers=False, server_header=False)  # the app reads the proxy's (web/proxy.py)
        # Ctrl-C: uvicorn stops gracefully, then raises the SIGINT it caught again once it is done; that is the stop.
        with contextlib.suppress(KeyboardInterrupt):
            uvicorn.Server(config).run(sockets=[listener])
    return 0


def address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, bound as uvicorn binds one for its workers (IPv6 when the host is)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048)


def reason(error: BaseException) -> str:
    """Why, from the system's words: "address already in use", "name or service not known"."""
    number = getattr(error, "errno", None)
    if isinstance(number, int) and number > 0:  # the errno's own words, not what wrapped them
        text = os.strerror(number)
    else:  # a name that does not resolve (a negative errno), or no errno at all
        text = (getattr(error, "strerror", None) or str(error)).partition(" (while attempting")[0].strip()
    text = text or type(error).__name__
    return text[:1].lower() + text[1:]


def database_problem(url: str | None) -> str | None:
    """Why PostgreSQL cannot be used, in one line naming where (never the password), or None when it answers (or
    the database is SQLite). Asked before the site opens its record, whose pool would wait 10 s five times over
    and then say only that no connection came."""
    if not url:
        return None
    import psycopg

    parts = urlsplit(url)
    try:
        where = address(parts.hostname or "127.0.0.1", parts.port or 5432)
    except ValueError:  # a port that is not one: say it as it was typed, without the credentials
        where = parts.netloc.rpartition("@")[2]
    try:
        psycopg.connect(url.split("?", 1)[0], connect_timeout=CONNECT_SECONDS).close()
    except psycopg.errors.ConnectionTimeout:
        return f"cannot reach the database (PostgreSQL at {where}): no answer within {CONNECT_SECONDS} s"
    except psycopg.Error as error:
        lines = str(error).strip().splitlines() or [type(error).__name__]
        # 'connection failed: connection to server at "H", port P failed: Connection refused' -> the last part
        why = lines[0].rpartition(" failed: ")[2].removeprefix("FATAL:").strip()
        return f"cannot reach the database (PostgreSQL at {where}): {why[:1].lower() + why[1:]}"
    return None


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C before the site serves (while it imports or reaches the database)
        print("canitbuy: interrupted", file=sys.stderr)
        sys.exit(130)
