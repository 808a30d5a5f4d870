"""Builds the record (the eventsourcing application) on SQLite or PostgreSQL from the settings, and the fast paths
the group committer takes on it when the record does nothing more than the library would (columns stored as they
are made, the runs asked for at once loaded in one select)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse
from uuid import UUID

import psycopg.errors
from eventsourcing.application import Application, Repository, project_aggregate
from eventsourcing.persistence import IntegrityError, PersistenceError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql
from psycopg.rows import tuple_row

from adapters.listening import DatabaseUnreachable, database_problem
from adapters.pg_recorder import TOPIC as ONE_TRIP_FACTORY
from adapters.pg_recorder import OneTripRecorder
from adapters.private_files import private_file
from adapters.settings import Settings
from domain.agent.runs import Run
from domain.eventlog.record import Clock, Notification, Record, UnknownRunError, utc_now
from domain.eventlog.schema import MsgspecMapper

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

    A PostgreSQL that refuses or does not answer is said at once (DatabaseUnreachable, one line naming where and
    why), where the library's pool would wait its connect time-out on each of the attempts: about 50 s.
    """
    if settings.database_url:
        problem = database_problem(settings.database_url)
        if problem:
            raise DatabaseUnreachable(problem)
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


def saves_only_put(record: Record) -> bool:
    """Whether the record's save does nothing beyond putting the events in its event store."""
    plain = all(getattr(type(record), name) is getattr(Application, name)
                for name in ("save", "_record", "_notify", "notify", "_take_snapshots"))
    return plain and record.repository.cache is None and record.snapshots is None


def column_store(record: Record) -> Callable[[Sequence[Any]], object] | None:
    """Stores events as `record.events.put` does, from the columns the record's mapper makes: when the recorder
    is ours and the mapper is the schema's (which neither compresses nor encrypts), else None."""
    recorder, mapper = record.recorder, record.mapper
    if type(mapper) is not MsgspecMapper or not isinstance(recorder, OneTripRecorder):
        return None
    if record.events.recorder is not recorder or record.events.mapper is not mapper:
        return None
    columns, insert = mapper.to_columns, recorder.insert_columns
    return lambda events: insert(*columns(events))


def runs_loader(record: Record) -> Callable[[Sequence[UUID]], list[Run | Exception]]:
    """Loads runs as `record.get_run` does, each run's outcome (the run or why not) in the order asked (the group
    committer loads the runs its callers ask for at once). In one select when the recorder is ours and a load is
    only the projection of the run's events (no cache, no snapshots: what `Repository.get` then does)."""
    recorder, events = record.recorder, record.events
    plain = type(record.repository) is Repository and type(record).get_run is Record.get_run
    if not (plain and record.repository.cache is None and record.snapshots is None
            and isinstance(recorder, OneTripRecorder) and events.recorder is recorder):
        def one_by_one(run_ids: Sequence[UUID]) -> list[Run | Exception]:
            return [_outcome(record.get_run, run_id) for run_id in run_ids]
        return one_by_one
    decode = events.mapper.to_domain_event

    def project(run_id: UUID, stored: Sequence[StoredEvent]) -> Run:
        run: Run | None = project_aggregate(None, map(decode, stored))
        if run is None:
            raise UnknownRunError(run_id)
        return run

    def in_one_select(run_ids: Sequence[UUID]) -> list[Run | Exception]:
        found = recorder.select_events_of(run_ids)
        return [_outcome(project, run_id, found.get(run_id, ())) for run_id in run_ids]
    return in_one_select


def _outcome(load: Callable[..., Run], *args: Any) -> Run | Exception:
    try:
        return load(*args)
    except Exception as error:  # noqa: BLE001 - this run's failure, delivered to its caller
        return error
