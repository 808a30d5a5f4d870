"""Builds the record (the eventsourcing application) on SQLite or PostgreSQL from the settings."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import psycopg.errors
from eventsourcing.persistence import IntegrityError, PersistenceError
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql
from psycopg.rows import tuple_row

from adapters.pg_recorder import TOPIC as ONE_TRIP_FACTORY
from adapters.private_files import private_file
from adapters.settings import Settings
from domain.eventlog.record import Clock, Notification, Record, utc_now

log = logging.getLogger(__name__)


class StoreConfigError(ValueError):
    pass


def record_env(settings: Settings) -> dict[str, str]:
    if settings.database_url:
        return postgres_env(settings.database_url)
    database = private_file(Path(settings.data_dir) / "canitbuy.sqlite3")  # made 0600 before SQLite opens it
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(database),
        "SQLITE_LOCK_TIMEOUT": "30",
    }


def postgres_env(url: str) -> dict[str, str]:
    parsed = urlparse(url)
    dbname = parsed.path.lstrip("/")
    if not dbname:
        raise StoreConfigError("CANITBUY_DATABASE_URL names no database (postgresql://host:5432/NAME)")
    query = parse_qs(parsed.query)
    env = {
        "PERSISTENCE_MODULE": ONE_TRIP_FACTORY,  # the library's, saving in one round trip (adapters/pg_recorder.py)
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": parsed.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(parsed.port or 5432),
        "POSTGRES_USER": unquote(parsed.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parsed.password or ""),
        "POSTGRES_CONNECT_TIMEOUT": "10",
        "POSTGRES_POOL_SIZE": "5",
        "POSTGRES_MAX_OVERFLOW": "10",
        "POSTGRES_PRE_PING": "y",
        "POSTGRES_LOCK_TIMEOUT": "10",
    }
    if "schema" in query:
        env["POSTGRES_SCHEMA"] = query["schema"][0]
    return env


class PostgresLogSource:
    """The notification log read straight from the events table as plain tuples.

    The recorder's `select_notifications` builds a dict row, a Notification and a UUID for every event; a
    replay spent about a quarter of its time on that. Same rows, same order, same bytes. The rows come in
    PostgreSQL's binary format: in text, every payload travels hex-encoded (twice its size) and is decoded back,
    which was most of the reading's time (issue 12: 1.5 s against 0.6 s for 39k events).
    """

    def __init__(self, recorder: PostgresApplicationRecorder) -> None:
        self.datastore = recorder.datastore
        table = sql.SQL("{}.{}").format(
            sql.Identifier(self.datastore.schema), sql.Identifier(recorder.events_table_name)
        )
        columns = sql.SQL(
            "SELECT notification_id, originator_id::text, originator_version, topic, state FROM {} "
            "WHERE notification_id > %s"
        ).format(table)
        order = sql.SQL(" ORDER BY notification_id LIMIT %s")
        self._open = columns + order
        self._bounded = columns + sql.SQL(" AND notification_id <= %s") + order

    def notifications(self, after: int, limit: int, stop: int | None) -> list[Notification]:
        with self.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as cursor:
            if stop is None:
                cursor.execute(self._open, (after, limit), prepare=True, binary=True)
            else:
                cursor.execute(self._bounded, (after, stop, limit), prepare=True, binary=True)
            return cursor.fetchall()


def use_fast_log(record: Record) -> Record:
    """Read the log with PostgresLogSource when the record is on PostgreSQL."""
    if isinstance(record.recorder, PostgresApplicationRecorder):
        record.log_source = PostgresLogSource(record.recorder)
    return record


def open_record(settings: Settings, clock: Clock = utc_now, attempts: int = 5) -> Record:
    """The record, with course 2.1 released on first start.

    Several processes may start at once on a fresh database: the library's CREATE TABLE IF NOT EXISTS can then
    collide in PostgreSQL's catalogue, and two first releases of the course conflict. Both are retried; the
    release that loses finds the other's.
    """
    for attempt in range(1, attempts + 1):
        try:
            record = use_fast_log(Record(env=record_env(settings), clock=clock))
        except (PersistenceError, psycopg.errors.UniqueViolation) as error:
            if attempt == attempts:
                raise
            log.info("creating the event tables collided with another process (%s); trying again", error)
            time.sleep(0.2 * attempt)
            continue
        try:
            record.ensure_course_released("2.1")
        except IntegrityError:
            record.ensure_course_released("2.1")  # another process released it first: now it is found
        return record
    raise AssertionError("unreachable")
