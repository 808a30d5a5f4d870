"""The one-round-trip PostgreSQL recorder (issue 17) keeps the library's guarantees on a real PostgreSQL: one total
order that a reader following the log never skips through, a conflicting save that writes nothing, and stores
shared with eventsourcing's own recorder in both directions."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError
from eventsourcing.postgres import PostgresApplicationRecorder

from adapters.eventstore import postgres_env
from adapters.pg_recorder import OneTripRecorder
from adapters.run_recorder import GroupCommitter
from domain.agent.actions import Click
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.eventlog.record import Record

WRITERS, SAVES = 4, 60


def at() -> datetime:
    return datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def step(number: int) -> StepRecord:
    return StepRecord(number=number, url=f"https://s01.lab.canitbuy.com/{number}", title="t", screenshot=None,
                      elements="b", notes="", action=Click(id=f"e{number}"), result="ok", duration_ms=1)


def new_run() -> Run:
    """A started run (two events)."""
    run = Run.schedule(station="s01", model="m", course_version="2.1", week="2026-W48", kind="browser",
                       requested_by="test", at=at())
    run.start(worker="w", browser_version="b", agent_version="a", at=at())
    return run


def ours(url: str) -> Record:
    record = Record(env=postgres_env(url), clock=at)
    assert type(record.recorder) is OneTripRecorder
    return record


def librarys(url: str) -> Record:
    record = Record(env={**postgres_env(url), "PERSISTENCE_MODULE": "eventsourcing.postgres"}, clock=at)
    assert type(record.recorder) is PostgresApplicationRecorder
    return record


@pytest.fixture
def both(postgres_url: str) -> Iterator[tuple[Record, Record]]:
    new, old = ours(postgres_url), librarys(postgres_url)
    try:
        yield new, old
    finally:
        new.close()
        old.close()


def positions(record: Record) -> list[int]:
    return [envelope.position for envelope in record.read_log(0, limit=100_000)]


def test_a_reader_following_the_log_never_skips_an_event_while_both_recorders_append_at_once(
    both: tuple[Record, Record],
) -> None:
    new, old = both
    seen: list[int] = []
    done = threading.Event()

    def write(record: Record) -> None:
        for _ in range(SAVES):
            record.save(new_run(), new_run())

    def follow() -> None:
        after = 0
        while True:
            finished = done.is_set()
            for envelope in new.read_log(after, limit=1000):
                seen.append(envelope.position)
                after = envelope.position
            if finished:
                return

    writers = [threading.Thread(target=write, args=(new if i % 2 else old,)) for i in range(WRITERS)]
    reader = threading.Thread(target=follow)
    reader.start()
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    done.set()
    reader.join()
    stored = positions(new)
    assert len(stored) == WRITERS * SAVES * 4 == len(set(stored))
    assert seen == sorted(set(seen))  # strictly increasing
    assert seen == stored  # nothing committed later under a lower position was passed over


def test_a_save_takes_the_table_lock_that_orders_the_log(postgres_url: str) -> None:
    """A plain INSERT would go ahead beside another transaction's row lock; a save waits for it to end."""
    record = ours(postgres_url)
    try:
        with psycopg.connect(postgres_url) as holder:
            holder.execute("LOCK TABLE canitbuy_events IN ROW EXCLUSIVE MODE")  # as an open INSERT's transaction
            saving = threading.Thread(target=record.save, args=(new_run(),))
            saving.start()
            assert wait_until(lambda: waiting_on_a_lock(postgres_url)), "the save did not queue on the lock"
            assert positions(record) == []
            holder.commit()
        saving.join()
        assert len(positions(record)) == 2
    finally:
        record.close()


def test_a_conflicting_save_writes_nothing_not_even_the_other_runs_events(postgres_url: str) -> None:
    record = ours(postgres_url)
    try:
        run, other = new_run(), new_run()
        record.save(run, other)
        stale = record.get_run(run.id)
        record.record_steps(run.id, [step(1)])  # another writer took version 2 first
        stale.record_step(step(1), at=at())
        fresh = record.get_run(other.id)
        fresh.record_step(step(1), at=at())
        head, fresh_step = record.head_position(), fresh.collect_events()

        with pytest.raises(IntegrityError):
            record.save(*fresh_step, *stale.collect_events())

        assert record.head_position() == head
        assert record.get_run(other.id).steps_recorded == 0
        record.save(*fresh_step)  # nothing of the failed save stands in its way
        assert record.get_run(other.id).steps_recorded == 1
    finally:
        record.close()


def test_in_a_shared_transaction_one_runs_conflict_fails_it_alone_and_the_others_are_stored(postgres_url: str) -> None:
    record = ours(postgres_url)
    committer = GroupCommitter(record)
    try:
        runs = [new_run() for _ in range(6)]
        record.save(*runs)
        stale = record.get_run(runs[0].id)
        record.record_steps(runs[0].id, [step(1)])
        stale.record_step(step(1), at=at())
        fresh = [record.get_run(run.id) for run in runs[1:]]
        for run in fresh:
            run.record_step(step(1), at=at())

        async def all_at_once() -> list[BaseException | None]:
            saves = [committer.save(stale.collect_events())]
            saves += [committer.save(run.collect_events()) for run in fresh]
            return await asyncio.gather(*saves, return_exceptions=True)

        outcomes = asyncio.run(all_at_once())

        assert isinstance(outcomes[0], IntegrityError)
        assert outcomes[1:] == [None] * len(fresh)
        assert [record.get_run(run.id).steps_recorded for run in runs] == [1] * len(runs)
        assert len(positions(record)) == len(runs) * 3
    finally:
        committer.close()
        record.close()


def test_events_written_by_either_recorder_read_back_by_the_other(both: tuple[Record, Record]) -> None:
    new, old = both
    by_old, by_new = new_run(), new_run()
    old.save(by_old)
    old.record_steps(by_old.id, [step(1), step(2)])
    new.save(by_new)
    new.record_steps(by_new.id, [step(1)])
    old.record_steps(by_new.id, [step(2)])  # the same run appended through the other recorder
    new.record_steps(by_old.id, [step(3)])

    for reader in (new, old):
        assert reader.get_run(by_old.id).steps_recorded == 3
        assert reader.get_run(by_new.id).steps_recorded == 2
        assert [(e.originator_id, e.name) for e in reader.read_log(0)] == [
            (str(by_old.id), "Run.Scheduled"), (str(by_old.id), "Run.Started"), (str(by_old.id), "Run.StepRecorded"),
            (str(by_old.id), "Run.StepRecorded"), (str(by_new.id), "Run.Scheduled"),
            (str(by_new.id), "Run.Started"), (str(by_new.id), "Run.StepRecorded"), (str(by_new.id), "Run.StepRecorded"),
            (str(by_old.id), "Run.StepRecorded"),
        ]
    notified = old.recorder.select_notifications(0, 100, inclusive_of_start=False)
    assert [n.id for n in notified] == positions(new)


def test_a_connection_the_server_closed_is_replaced_before_the_next_save(postgres_url: str) -> None:
    record = ours(postgres_url)
    try:
        record.save(new_run())
        recorder = record.recorder
        assert isinstance(recorder, OneTripRecorder) and recorder._conn is not None
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (recorder._conn.info.backend_pid,))
        assert wait_until(lambda: backend_gone(postgres_url, recorder))

        record.save(new_run())

        assert len(positions(record)) == 4
    finally:
        record.close()


def waiting_on_a_lock(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND wait_event_type = 'Lock'").fetchone()
    return bool(row and row[0])


def backend_gone(url: str, recorder: OneTripRecorder) -> bool:
    assert recorder._conn is not None
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                           (recorder._conn.info.backend_pid,)).fetchone()
    return bool(row and row[0] == 0)


def wait_until(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    """Polls a condition on the database (not a timing assertion: the deadline only bounds a hang)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False



STEP_1_AS_STORED = (
    b'{"timestamp":"2026-11-24T10:00:00Z","step":{"number":1,"url":"https://s01.lab.canitbuy.com/1","title":"t",'
    b'"screenshot":null,"elements":"b","notes":"","action":{"type":"click","id":"e1"},"result":"ok",'
    b'"duration_ms":1,"model_ms":0,"tokens_in":0,"tokens_out":0,"cost_usd":0.0,"tokens_reasoning":0,'
    b'"tokens_cached":0,"exchange":null,"browser_retries":0,"estimated":false}}'
)
"""Run.StepRecorded of `step(1)` at `at()` as the record stored it before the committer built rows as columns, with
the fields added since at their defaults (`estimated`, c5f4c8d: steps stored before it read it as false)."""


def test_the_committers_rows_are_the_rows_the_librarys_recorder_writes_byte_for_byte(
        both: tuple[Record, Record], postgres_url: str) -> None:
    new, old = both
    committer = GroupCommitter(new)
    assert committer._put_columns is not None  # the column path is the one taken on our recorder
    by_committer, by_library = new_run(), new_run()
    new.save(by_committer)
    old.save(by_library)
    for run in (by_committer, by_library):
        for number in (1, 2, 3):
            run.record_step(step(number), at=at())
    try:
        asyncio.run(committer.save(by_committer.collect_events()))
    finally:
        committer.close()
    old.save(*by_library.collect_events())

    with psycopg.connect(postgres_url) as conn:
        def rows(run: Run) -> list[tuple[int, str, bytes]]:
            return conn.execute("SELECT originator_version, topic, state FROM canitbuy_events "
                                "WHERE originator_id = %s ORDER BY originator_version", (run.id,)).fetchall()
        stored, expected = rows(by_committer), rows(by_library)
    assert stored[2:] == expected[2:]
    assert [(version, topic) for version, topic, _ in stored[2:]] == [
        (3, "domain.agent.runs:Run.StepRecorded"), (4, "domain.agent.runs:Run.StepRecorded"),
        (5, "domain.agent.runs:Run.StepRecorded")]
    assert bytes(stored[2][2]) == STEP_1_AS_STORED
    for reader in (new, old):
        assert reader.get_run(by_committer.id).steps_recorded == 3
