"""Run leases: one run executes in one place at a time.

A lease is a row in the database the events live in (table `run_leases`, migration 0005 on PostgreSQL, created
on first use on SQLite): whoever holds an unexpired row for a run may execute it, and renews it with a
heartbeat. The database's own clock decides expiry, so workers on machines with skewed clocks agree; a test
passes a clock of its own instead (`open_leases(settings, clock=...)`) and moves time on without sleeping. We keep
leases beside the events rather than in Redis because a Redis restart must not free a run that is still
executing, and the embedded default has no Redis at all. The event store's optimistic concurrency stays the
last guard: two holders can never both append the same step.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import psycopg

from adapters.private_files import private_dir
from adapters.settings import Settings

Clock = Callable[[], float]
"""Seconds since the Unix epoch."""

_SQLITE_TABLE = """
CREATE TABLE IF NOT EXISTS run_leases (
    run_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
)"""
_SQLITE_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
_PG_NOW = "extract(epoch from clock_timestamp())"

# Take the row when it is free, expired, or already ours (a retried job on the same worker).
_ACQUIRE = """
INSERT INTO run_leases (run_id, holder, expires_at) VALUES (%(run)s, %(holder)s, {now} + %(ttl)s)
ON CONFLICT (run_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE run_leases.expires_at < {now} OR run_leases.holder = excluded.holder
RETURNING holder"""
_RENEW = """
UPDATE run_leases SET expires_at = {now} + %(ttl)s WHERE run_id = %(run)s AND holder = %(holder)s
RETURNING holder"""
_RELEASE = "DELETE FROM run_leases WHERE run_id = %(run)s AND holder = %(holder)s"
_LAPSED = "SELECT run_id, holder FROM run_leases WHERE expires_at < {now}"
_FORGET = "DELETE FROM run_leases WHERE run_id = %(run)s AND expires_at < {now}"


@dataclass(frozen=True)
class Lapsed:
    run_id: str
    holder: str


class SqlLeaseStore:
    """The same statements on SQLite (paramstyle rewritten) and PostgreSQL; calls are synchronous and short."""

    def __init__(self, connect: Callable[[], Any], now: str, named: bool, clock: Clock | None = None) -> None:
        # With a clock of ours, "now" is a parameter read from it; without, the database's own time.
        self._connect, self._now, self._named = connect, "%(now)s" if clock else now, named
        self._clock = clock
        self._local = threading.local()  # sqlite3 and psycopg connections are not shared across threads

    def _sql(self, template: str) -> str:
        sql = template.format(now=self._now)
        return sql if self._named else sql.replace("%(", ":").replace(")s", "")

    def _execute(self, template: str, params: dict[str, object]) -> list[tuple[object, ...]]:
        if self._clock is not None:
            params = {**params, "now": self._clock()}
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        try:
            # Each statement is its own transaction: autocommit on PostgreSQL, the context manager on SQLite.
            if self._named:
                return _rows(conn.execute(self._sql(template), params))
            with conn:
                return _rows(conn.execute(self._sql(template), params))
        except Exception:
            self._local.conn = None  # a dropped connection (database restart) is reopened next time
            try:
                conn.close()
            finally:
                raise

    def acquire(self, run_id: str, holder: str, ttl: float) -> bool:
        rows = self._execute(_ACQUIRE, {"run": run_id, "holder": holder, "ttl": ttl})
        return bool(rows) and rows[0][0] == holder

    def renew(self, run_id: str, holder: str, ttl: float) -> bool:
        return bool(self._execute(_RENEW, {"run": run_id, "holder": holder, "ttl": ttl}))

    def release(self, run_id: str, holder: str) -> None:
        self._execute(_RELEASE, {"run": run_id, "holder": holder})

    def lapsed(self) -> list[Lapsed]:
        return [Lapsed(str(r[0]), str(r[1])) for r in self._execute(_LAPSED, {})]

    def forget(self, run_id: str) -> None:
        self._execute(_FORGET, {"run": run_id})

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def _rows(cursor: Any) -> list[tuple[object, ...]]:
    return list(cursor.fetchall()) if cursor.description else []


def _sqlite_connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
    conn.execute(_SQLITE_TABLE)
    return conn


def _postgres_connect(url: str) -> psycopg.Connection[tuple[object, ...]]:
    conn = psycopg.connect(url, connect_timeout=10, autocommit=True)
    # Idempotent, so workers need not wait for `canitbuy db migrate`; IF NOT EXISTS is not race-free, so a
    # process creating the table at the same moment is tolerated.
    with contextlib.suppress(psycopg.errors.UniqueViolation, psycopg.errors.DuplicateTable):
        conn.execute(migration_sql())
    return conn


def migration_sql() -> str:
    return (resources.files("migrations") / "0005_run_leases.sql").read_text()


def open_leases(settings: Settings, *, clock: Clock | None = None) -> SqlLeaseStore:
    """The lease table of the configured database; `clock` replaces the database's time (tests)."""
    if settings.database_url:
        url = settings.database_url.split("?", 1)[0]
        return SqlLeaseStore(lambda: _postgres_connect(url), _PG_NOW, named=True, clock=clock)
    private_dir(settings.data_dir)
    # A file of its own: lease heartbeats never wait behind the event store's write lock.
    path = settings.data_dir / "leases.sqlite3"
    return SqlLeaseStore(lambda: _sqlite_connect(path), _SQLITE_NOW, named=False, clock=clock)
