"""Loads on the one-round-trip recorder (issue 17): `select_events` on connections of its own gives the library's
rows in the library's order for every bound, survives a connection the server closed, raises the library's
errors, and opens no more connections than the library's pool would."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest
from eventsourcing.persistence import OperationalError, ProgrammingError
from eventsourcing.postgres import PostgresApplicationRecorder
from test_one_trip_recorder import at, librarys, new_run, ours, step, wait_until

from adapters.pg_recorder import OneTripRecorder
from domain.agent.runs import Run
from domain.eventlog.record import Record

STEPS = 5


@pytest.fixture
def record(postgres_url: str) -> Iterator[Record]:
    record = ours(postgres_url)
    try:
        yield record
    finally:
        record.close()


def a_run_with_steps(record: Record) -> Run:
    run = new_run()
    record.save(run)
    record.record_steps(run.id, [step(n) for n in range(1, STEPS + 1)])
    return record.get_run(run.id)


def recorder_of(record: Record) -> OneTripRecorder:
    recorder = record.recorder
    assert isinstance(recorder, OneTripRecorder)
    return recorder


def test_every_bound_selects_the_rows_the_librarys_recorder_selects_in_its_order(
        record: Record, postgres_url: str) -> None:
    run, other = a_run_with_steps(record), a_run_with_steps(record)
    library = librarys(postgres_url)
    try:
        theirs = library.recorder
        assert type(theirs) is PostgresApplicationRecorder
        checked = 0
        for gt in (None, 0, 2, 7):
            for lte in (None, 1, 4, 7):
                for desc in (False, True):
                    for limit in (None, 1, 3):
                        for originator in (run.id, str(other.id)):
                            bounds = {"gt": gt, "lte": lte, "desc": desc, "limit": limit}
                            expected = theirs.select_events(originator, **bounds)
                            assert recorder_of(record).select_events(originator, **bounds) == expected, bounds
                            checked += bool(expected)
        assert checked > 100  # most bounds select something: not a comparison of empty lists
    finally:
        library.close()
    assert record.get_run(run.id).steps_recorded == STEPS


def test_a_reading_connection_the_server_closed_is_replaced_before_the_next_load(
        record: Record, postgres_url: str) -> None:
    run = a_run_with_steps(record)
    idle = recorder_of(record)._readers._idle
    assert len(idle) == 1
    pid = idle[0].info.backend_pid
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

        def gone() -> bool:
            row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
            return bool(row and row[0] == 0)

        assert wait_until(gone)

    assert record.get_run(run.id).steps_recorded == STEPS
    assert [conn.info.backend_pid for conn in idle] != [pid]


def test_a_failed_load_raises_the_librarys_error_and_its_connection_is_not_kept(
        record: Record, postgres_url: str) -> None:
    run = a_run_with_steps(record)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("ALTER TABLE canitbuy_events RENAME TO elsewhere")
    with pytest.raises(ProgrammingError):
        record.get_run(run.id)
    assert recorder_of(record)._readers._idle == []
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("ALTER TABLE elsewhere RENAME TO canitbuy_events")
    assert record.get_run(run.id).steps_recorded == STEPS


def test_loads_in_many_threads_share_at_most_the_pools_number_of_connections(record: Record) -> None:
    run = a_run_with_steps(record)
    readers = recorder_of(record)._readers
    most = record.recorder.datastore.pool.max_size  # type: ignore[attr-defined]
    opened: list[int] = []
    before, connect = len(readers._idle), readers._connect

    def counted() -> psycopg.Connection[tuple[object, ...]]:
        conn = connect()
        opened.append(conn.info.backend_pid)
        return conn

    readers._connect = counted
    found: list[int] = []
    threads = [threading.Thread(target=lambda: found.extend(
        record.get_run(run.id).steps_recorded for _ in range(20))) for _ in range(3 * most)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [STEPS] * 20 * 3 * most
    assert before + len(opened) <= most
    assert len(readers._idle) == before + len(opened)


def test_a_load_waiting_longer_than_the_pools_timeout_for_a_connection_fails_as_a_dropped_connection(
        record: Record) -> None:
    """OperationalError is what the run recorder retries while the database is unreachable."""
    run = a_run_with_steps(record)
    readers = recorder_of(record)._readers
    readers._timeout = 0.01
    held = [readers.connection() for _ in range(record.recorder.datastore.pool.max_size)]  # type: ignore[attr-defined]
    for each in held:
        each.__enter__()
    try:
        with pytest.raises(OperationalError):
            record.get_run(run.id)
    finally:
        for each in held:
            each.__exit__(None, None, None)
    run.record_step(step(STEPS + 1), at=at())
    record.save(run)
    assert record.get_run(run.id).steps_recorded == STEPS + 1
