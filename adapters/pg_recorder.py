"""The record's PostgreSQL recorder: storing a transaction's events is one statement, one round trip.

eventsourcing's PostgresApplicationRecorder stores a save in several round trips (the pool's pre-ping, a pipeline
of lock timeout, table lock, NOTIFY and INSERT, then COMMIT), and builds a composite value per event on the way.
On a loaded machine each round trip costs milliseconds, and every writer waits for them behind the table lock.

This recorder calls one server-side function instead, created with the table (CREATE OR REPLACE on every open,
as the library does with its own function), on a connection of its own in autocommit: the statement is its own
transaction. Saves of one process share that connection one at a time (they would queue on the table lock
anyway), so no pool check is needed before each: a connection the server closed (a restart) has said so on its
socket, which is looked at without a round trip, and is replaced. The function
- takes the same EXCLUSIVE lock on the events table before any notification id is drawn, and the lock is held
  until the statement's transaction commits, so ids are drawn and committed in one order: a reader following
  the log never passes an event that commits later with a lower id (the library's guarantee, kept);
- inserts the events from four arrays (ids, versions, topics, payloads) sent in binary, in the order given;
  the primary key (originator_id, originator_version) refuses a version already taken, which aborts the whole
  statement, so a conflicting save writes nothing (optimistic concurrency, kept);
- notifies the same channel the library's subscriptions listen on.

The table, its columns, its lock and its channel are the library's: stores written by either recorder read back by
the other, and processes running either can write one store at once.

Loading an aggregate (`select_events`, what every repository get calls) is one round trip too. Through the
library's pool it was three (the pool's pre-ping, the select, and the pool's check on return), about 300 us of
wall and 170 us of CPU a load at 64 runs in flight, where each run's first step loads the run (issue 17). A load
takes an idle connection of this recorder's own (autocommit: the select is its own transaction), looked at on its
socket as a save's is, and gives it back; at most as many are open as the library's pool would open.
"""

from __future__ import annotations

import select
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing import persistence
from eventsourcing.persistence import ApplicationRecorder, InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore, PostgresFactory
from eventsourcing.utils import retry
from psycopg import sql
from psycopg.rows import TupleRow, tuple_row

TOPIC = "adapters.pg_recorder:OneTripFactory"
"""The persistence module the record is given (PERSISTENCE_MODULE) on PostgreSQL."""

_ERRORS: tuple[tuple[type[psycopg.Error], type[persistence.PersistenceError]], ...] = (
    (psycopg.IntegrityError, persistence.IntegrityError),
    (psycopg.OperationalError, OperationalError),
    (psycopg.InterfaceError, InterfaceError),
    (psycopg.DataError, persistence.DataError),
    (psycopg.InternalError, persistence.InternalError),
    (psycopg.ProgrammingError, persistence.ProgrammingError),
    (psycopg.NotSupportedError, persistence.NotSupportedError),
    (psycopg.DatabaseError, persistence.DatabaseError),
    (psycopg.Error, persistence.PersistenceError),
)
"""psycopg's errors as the library's (callers catch those), most specific first."""


class OneTripRecorder(PostgresApplicationRecorder):
    def __init__(self, datastore: PostgresDatastore, *, events_table_name: str = "stored_events") -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        function = f"{events_table_name}_append"
        self.check_identifier_length(function)
        names = {
            "schema": sql.Identifier(self.datastore.schema),
            "table": sql.Identifier(self.events_table_name),
            "function": sql.Identifier(function),
            "channel": sql.Identifier(self.channel_name),
            "id_type": sql.SQL(self.datastore.originator_id_type),
        }
        self.sql_create_statements.append(sql.SQL(_CREATE_FUNCTION).format(
            **names, lock_timeout=sql.Literal(f"{self.datastore.lock_timeout}s")))
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[TupleRow] | None = None
        self._append = sql.SQL(
            "SELECT {schema}.{function}(%b::{id_type}[], %b::int8[], %b::text[], %b::bytea[])"
        ).format(**names)
        self._select = sql.SQL(
            "SELECT originator_id, originator_version, topic, state FROM {schema}.{table} WHERE originator_id = %s"
        ).format(**names)
        self._selects: dict[tuple[bool, bool, bool, bool], bytes] = {}
        self._select_many = sql.SQL(
            "SELECT originator_id, originator_version, topic, state FROM {schema}.{table} "
            "WHERE originator_id = ANY(%b::{id_type}[]) ORDER BY originator_id, originator_version"
        ).format(**names)
        self._readers = _Readers(self._connect, self.datastore.pool.max_size, self.datastore.pool.timeout)

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        """Store the events in one transaction and return their notification ids, in the order given."""
        return self.insert_columns(  # type: ignore[no-any-return]  # the library's retry decorator is untyped
            [e.originator_id for e in stored_events],
            [e.originator_version for e in stored_events],
            [e.topic for e in stored_events],
            [e.state for e in stored_events],
        )

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_columns(self, ids: Sequence[Any], versions: Sequence[int], topics: Sequence[str],
                       states: Sequence[bytes]) -> Sequence[int]:
        """`insert_events` of stored events given column by column (the group committer builds the columns
        directly with the record's mapper): one transaction, the notification ids in the order given."""
        if not ids:
            return []
        with self._connection() as conn, conn.cursor() as cursor:
            cursor.execute(self._append, (ids, versions, topics, states), prepare=True, binary=True)
            return [row[0] for row in cursor.fetchall()]

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def select_events(self, originator_id: UUID | str, *, gt: int | None = None, lte: int | None = None,
                      desc: bool = False, limit: int | None = None) -> Sequence[StoredEvent]:
        """The library's `select_events` (same rows, same order) in one round trip on a reading connection."""
        params: list[Any] = [originator_id]
        params += [value for value in (gt, lte, limit) if value is not None]
        with self._readers.connection() as conn, conn.cursor() as cursor:
            cursor.execute(self._select_statement(conn, gt is not None, lte is not None, desc, limit is not None),
                           params, prepare=True, binary=True)
            return [StoredEvent(originator_id=row[0], originator_version=row[1], topic=row[2], state=row[3])
                    for row in cursor.fetchall()]

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def select_events_of(self, originator_ids: Sequence[Any]) -> dict[Any, list[StoredEvent]]:
        """Every event of each of these originators (as `select_events` with no bounds gives them: in version
        order), in one select; an originator with no events is not in the answer."""
        found: dict[Any, list[StoredEvent]] = {}
        with self._readers.connection() as conn, conn.cursor() as cursor:
            cursor.execute(self._select_many, (list(originator_ids),), prepare=True, binary=True)
            for originator_id, version, topic, state in cursor.fetchall():
                events = found.get(originator_id)
                if events is None:
                    events = found[originator_id] = []
                events.append(StoredEvent(originator_id=originator_id, originator_version=version, topic=topic,
                                          state=state))
        return found

    def _select_statement(self, conn: psycopg.Connection[Any], gt: bool, lte: bool, desc: bool,
                          limit: bool) -> bytes:
        """The select for these bounds, as the library words it, rendered once."""
        key = (gt, lte, desc, limit)
        statement = self._selects.get(key)
        if statement is None:
            query = self._select
            if gt:
                query += sql.SQL(" AND originator_version > %s")
            if lte:
                query += sql.SQL(" AND originator_version <= %s")
            query += sql.SQL(" ORDER BY originator_version DESC" if desc else " ORDER BY originator_version ASC")
            if limit:
                query += sql.SQL(" LIMIT %s")
            statement = self._selects[key] = query.as_bytes(conn)
        return statement

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[TupleRow]]:
        """This recorder's connection, for one save at a time; psycopg's errors raised as the library's."""
        with self._lock:
            try:
                conn = self._conn
                if conn is None or conn.closed or _closed_by_server(conn):
                    self._drop()
                    conn = self._conn = self._connect()
                yield conn
            except psycopg.Error as error:
                if self._conn is not None and self._conn.broken:
                    self._drop()
                raise _as_librarys(error) from error

    def _connect(self) -> psycopg.Connection[TupleRow]:
        pool = self.datastore.pool
        given = pool.kwargs() if callable(pool.kwargs) else pool.kwargs
        kwargs = {**(given or {}), "row_factory": tuple_row, "autocommit": True}
        if pool.get_password_func is not None:
            kwargs["password"] = pool.get_password_func()
        return psycopg.Connection.connect(str(pool.conninfo), connect_timeout=max(int(pool.timeout), 1), **kwargs)

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def close(self) -> None:
        with self._lock:
            self._drop()
        self._readers.close()


class _Readers:
    """Connections for loads, which happen in many threads at once: the idle ones last in first out (the most
    recently used is the likeliest alive and warm), at most `size` open at a time, as the library's pool."""

    def __init__(self, connect: Callable[[], psycopg.Connection[TupleRow]], size: int, timeout: float) -> None:
        self._connect, self._timeout = connect, timeout
        self._open = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._idle: list[psycopg.Connection[TupleRow]] = []
        self._closed = False

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[TupleRow]]:
        """An idle connection the server has not closed, or a new one; given back after a load that raised
        nothing (one that raised is closed: a failed load is rare, and its connection's state is not looked
        into). psycopg's errors raised as the library's."""
        if not self._open.acquire(timeout=self._timeout):
            raise OperationalError(f"no connection to load with within {self._timeout}s")
        conn = None
        try:
            conn = self._take()
            yield conn
        except psycopg.Error as error:
            raise _as_librarys(error) from error
        else:
            with self._lock:
                if not self._closed:  # a load that ends after the recorder closed closes its connection
                    self._idle.append(conn)
                    conn = None
        finally:
            if conn is not None:
                conn.close()
            self._open.release()

    def _take(self) -> psycopg.Connection[TupleRow]:
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._connect()
            if not conn.closed and not _closed_by_server(conn):
                return conn
            conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for conn in idle:
            conn.close()


def _as_librarys(error: psycopg.Error) -> persistence.PersistenceError:
    return next(ours for theirs, ours in _ERRORS if isinstance(error, theirs))(str(error))


def _closed_by_server(conn: psycopg.Connection[Any]) -> bool:
    """An idle connection with something to read has been told it is closed (or the socket ended): nothing
    else is sent to a connection that waits for no answer and listens to no channel."""
    readable, _, _ = select.select([conn.fileno()], [], [], 0)
    return bool(readable)


class OneTripFactory(PostgresFactory):
    """The library's PostgreSQL factory, whose application recorder is OneTripRecorder (closed with it)."""

    application_recorder_class = OneTripRecorder

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._recorders: list[OneTripRecorder] = []

    def application_recorder(self) -> ApplicationRecorder:
        recorder = super().application_recorder()
        if isinstance(recorder, OneTripRecorder):
            self._recorders.append(recorder)
        return recorder

    def close(self) -> None:
        for recorder in self._recorders:
            recorder.close()
        super().close()


_CREATE_FUNCTION = """
CREATE OR REPLACE FUNCTION {schema}.{function}(
    ids {id_type}[], versions int8[], topics text[], states bytea[]
) RETURNS SETOF int8
LANGUAGE plpgsql
SET lock_timeout = {lock_timeout}
AS $append$
BEGIN
    -- Ids are drawn and committed in one order: the lock is taken before the first id, kept until commit.
    LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE;
    NOTIFY {channel};
    RETURN QUERY
        INSERT INTO {schema}.{table} (originator_id, originator_version, topic, state)
        SELECT e.originator_id, e.originator_version, e.topic, e.state
        FROM unnest(ids, versions, topics, states) WITH ORDINALITY
            AS e(originator_id, originator_version, topic, state, n)
        ORDER BY e.n
        RETURNING notification_id;
END
$append$
"""
