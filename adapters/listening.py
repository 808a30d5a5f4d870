"""Starting a server or a worker: the address bound before uvicorn or arq take over, and the database asked
whether it answers, so that a busy port, a host not this machine's or a database that does not answer is one
line naming where and why. Shared by `web serve` (web/__main__), `lab serve` and `worker` (ops), which may not
import one another."""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from adapters.private_files import private_dir

CONNECT_SECONDS = 5
"""How long the database may take to answer at start."""


class DatabaseUnreachable(ConnectionError):
    """The PostgreSQL the record is to be opened in does not answer; the message is `database_problem`'s line."""


def data_dir_problem(path: Path) -> str | None:
    """Why the data folder cannot be used (made if missing, then written to), in one line, or None when it can."""
    where = f"the data folder {path} (CANITBUY_DATA_DIR)"
    if path.exists() and not path.is_dir():
        return f"{where} is not a folder"
    try:
        private_dir(path)  # the owner's alone, as the site and the worker would make it
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        return f"{where} cannot be used: {reason(error)}"
    return None


def address(host: str, port: int) -> str:
    """host:port as a URL writes it ([::1]:8000 for IPv6)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, bound as uvicorn binds one for its workers (IPv6 when the host is)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048)


def reason(error: BaseException) -> str:
    """Why, from the system's words: "address already in use", "connection refused", "name or service not
    known"."""
    number = getattr(error, "errno", None)
    if isinstance(number, int) and number > 0:  # the errno's own words, not what wrapped them
        text = os.strerror(number)
    else:  # a name that does not resolve (a negative errno), or no errno at all
        text = (getattr(error, "strerror", None) or str(error)).partition(" (while attempting")[0].strip()
    text = text or type(error).__name__
    return text[:1].lower() + text[1:]


SQLITE_FILES = ("canitbuy.sqlite3", "readmodels.sqlite3", "leases.sqlite3")
"""The embedded default's databases in the data folder: the record, the read models and the runs' leases."""


def sqlite_problem(data_dir: Path) -> str | None:
    """Why one of the embedded default's SQLite files in `data_dir` cannot be read (a file that is not a database,
    a damaged header), in one line naming it, or None. Read-only: a file that is not there is made later."""
    import sqlite3

    for name in SQLITE_FILES:
        path = data_dir / name
        if not path.exists():
            continue
        try:
            with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as error:
            return f"the database {path} (SQLite) cannot be read: {error}"
    return None


def database_problem(url: str | None, seconds: float = CONNECT_SECONDS) -> str | None:
    """Why the PostgreSQL at `url` cannot be used, in one line naming where (never the password) and why, or None
    when it answers (or there is none: SQLite). Asked before the record is opened, whose pool would wait 10 s five
    times over and then say only that no connection came."""
    if not url:
        return None
    import psycopg

    parts = urlsplit(url)
    try:
        where = address(parts.hostname or "127.0.0.1", parts.port or 5432)
    except ValueError:  # a port that is not one: say it as it was typed, without the credentials
        where = parts.netloc.rpartition("@")[2]
    try:
        psycopg.connect(url.split("?", 1)[0], connect_timeout=max(1, round(seconds))).close()
    except psycopg.errors.ConnectionTimeout:
        return f"cannot reach the database (PostgreSQL at {where}): no answer within {seconds:g} s"
    except psycopg.Error as error:
        lines = str(error).strip().splitlines() or [type(error).__name__]
        # 'connection failed: connection to server at "H", port P failed: Connection refused' -> the last part
        why = lines[0].rpartition(" failed: ")[2].removeprefix("FATAL:").strip()
        return f"cannot reach the database (PostgreSQL at {where}): {why[:1].lower() + why[1:]}"
    return None
