"""A thin SQL connection for the read models on SQLite or PostgreSQL, and the migrations that shape them.

SQL is written once with `?` placeholders; on PostgreSQL they become `%s`. The numbered files in migrations/
use only SQL both databases share, and `migrate()` applies the ones not yet applied (tracked in
rm_migrations), so calling it at every start is safe. On SQLite the read models live in their own file beside
the event store (readmodels.sqlite3), so projecting never holds the lock that event writers need.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from typing import Any

import psycopg

from adapters.private_files import private_file
from adapters.settings import Settings

Row = tuple[Any, ...]


class Tx:
    """One transaction: execute, executemany and fetch with `?` placeholders on either backend."""

    def __init__(self, cursor: Any, postgres: bool) -> None:
        self._cursor, self._postgres = cursor, postgres

    @property
    def postgres(self) -> bool:
        return self._postgres

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self._postgres else sql

    def _params(self, params: Sequence[Any]) -> tuple[Any, ...] | None:
        # psycopg parses % only when parameters are given
        return tuple(params) if params or not self._postgres else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._cursor.execute(self._sql(sql), self._params(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._cursor.executemany(self._sql(sql), [tuple(r) for r in rows])

    def copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Bulk-insert rows into a table (COPY on PostgreSQL): no conflict handling, for emptied tables."""
        names = ", ".join(columns)
        if self._postgres:
            with self._cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        marks = ", ".join("?" * len(columns))
        self._cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)  # noqa: S608

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self._cursor.execute(self._sql(sql), self._params(params))
        return [tuple(r) for r in self._cursor.fetchall()]

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None


class SqlDb:
    def __init__(self, settings: Settings) -> None:
        self.postgres = settings.database_url is not None
        self._url = settings.database_url
        self._path = settings.data_dir / "readmodels.sqlite3"

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """Commit when the block ends normally, roll back when it raises."""
        if self._url:
            with psycopg.connect(self._url) as conn, conn.cursor() as cursor:
                yield Tx(cursor, postgres=True)
            return
        private_file(self._path)  # password hashes live here: made 0600 before SQLite opens it
        lite = sqlite3.connect(self._path, timeout=30, isolation_level=None)
        try:
            lite.execute("PRAGMA journal_mode=WAL")
            lite.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(lite.cursor(), postgres=False)
            except BaseException:
                lite.execute("ROLLBACK")
                raise
            lite.execute("COMMIT")
        finally:
            lite.close()

    def migrate(self) -> list[str]:
        """Apply the migrations not yet applied, in order; return their names."""
        applied = []
        with self.transaction() as tx:
            tx.execute("CREATE TABLE IF NOT EXISTS rm_migrations (name TEXT PRIMARY KEY)")
            done = {row[0] for row in tx.fetchall("SELECT name FROM rm_migrations")}
            for name, sql in migration_files():
                if name in done:
                    continue
                for statement in statements(sql):
                    tx.execute(statement)
                tx.execute("INSERT INTO rm_migrations (name) VALUES (?)", (name,))
                applied.append(name)
        return applied


def migration_files() -> list[tuple[str, str]]:
    """(name, SQL) of every numbered migration, in order."""
    files = [f for f in resources.files("migrations").iterdir() if f.name.endswith(".sql")]
    return [(f.name, f.read_text()) for f in sorted(files, key=lambda f: f.name)]


def statements(sql: str) -> list[str]:
    """The statements of a migration file: comments dropped, split at semicolons (none inside strings)."""
    text = "\n".join(line.split("--", 1)[0] for line in sql.splitlines())
    return [s.strip() for s in text.split(";") if s.strip()]
