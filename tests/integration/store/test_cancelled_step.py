"""A step taken into a transaction is waited for even when its caller is cancelled (issue 17): the run moves on
only once the step is stored, and the recorder learns the save's outcome before the cancellation goes on."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

import anyio
import anyio.to_thread
import psycopg
from eventsourcing.persistence import IntegrityError
from test_group_commit import started_runs, stored_steps
from test_one_trip_recorder import wait_until, waiting_on_a_lock

from adapters.run_recorder import GroupCommitter, RecordRunRecorder
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.actions import Click
from domain.agent.ports import StepRecord
from domain.eventlog.record import Record


def step(number: int) -> StepRecord:
    return StepRecord(number=number, url=f"https://s01.lab.canitbuy.com/{number}", title="t", screenshot=None,
                      elements="b", notes="", action=Click(id=f"e{number}"), result="ok", duration_ms=1)


@contextmanager
def one_step_stored(url: str) -> Iterator[tuple[Runtime, UUID, RecordRunRecorder]]:
    """A started run with its first step stored, and its recorder (which keeps the run aggregate)."""
    with build_runtime(Settings(database_url=url)) as runtime:
        (run_id,) = started_runs(runtime, 1)
        recorder = runtime.recorder(run_id)
        anyio.run(recorder.step_recorded, step(1))
        yield runtime, run_id, recorder


@contextmanager
def table_held(url: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """Another transaction holding the events table as an open INSERT's does: a save queues on the lock."""
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE canitbuy_events IN ROW EXCLUSIVE MODE")
        yield holder


async def cancelled_while_saving(recorder: RecordRunRecorder, url: str, holder: psycopg.Connection[object],
                                 number: int) -> list[str]:
    """Record step `number`, cancel the caller while its save waits on the lock, then let the save through."""
    seen: list[str] = []

    async def record_step() -> None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            try:
                await recorder.step_recorded(step(number))
            except IntegrityError:
                seen.append("refused")
        seen.append("left the cancelled scope")

    scopes: list[anyio.CancelScope] = []
    async with anyio.create_task_group() as group:
        group.start_soon(record_step)
        assert await anyio.to_thread.run_sync(wait_until, lambda: waiting_on_a_lock(url))
        scopes[0].cancel()
        await anyio.sleep(0.3)
        seen.append("cancelled, still waiting" if not seen else "gave up on the save")
        holder.commit()  # the save goes through
    return seen


def test_a_caller_cancelled_while_its_step_is_saved_waits_for_it_and_its_run_moves_on_after(
        postgres_url: str) -> None:
    with one_step_stored(postgres_url) as (runtime, run_id, recorder):
        with table_held(postgres_url) as holder:
            seen = anyio.run(cancelled_while_saving, recorder, postgres_url, holder, 2)

        assert seen == ["cancelled, still waiting", "left the cancelled scope"]
        assert [n for _, n in stored_steps(runtime)[str(run_id)]] == [1, 2]
        assert recorder._run is not None and recorder._run.steps_recorded == 2  # it knows the save went through
        anyio.run(recorder.step_recorded, step(3))  # and goes on from there
        assert [n for _, n in stored_steps(runtime)[str(run_id)]] == [1, 2, 3]


def test_a_caller_cancelled_while_its_step_is_refused_learns_the_refusal(postgres_url: str) -> None:
    with one_step_stored(postgres_url) as (runtime, run_id, recorder):
        record: Record = runtime.record
        record.cut_short_run(run_id, "our_error", "lease lapsed", steps=1)  # the reaper, meanwhile

        with table_held(postgres_url) as holder:
            seen = anyio.run(cancelled_while_saving, recorder, postgres_url, holder, 2)

        assert seen == ["cancelled, still waiting", "refused", "left the cancelled scope"]
        assert recorder._run is None  # the refusal reached the recorder: it reads the run again next time
        assert [n for _, n in stored_steps(runtime)[str(run_id)]] == [1]


async def settled_before_the_cancellation(recorder: RecordRunRecorder, committer: GroupCommitter, url: str,
                                          holder: psycopg.Connection[object], number: int) -> list[str]:
    """Record step `number`; once its save waits on the lock, hold the event loop while the save goes through
    and its outcome is queued for the loop, then cancel the caller: the outcome is handled before the caller's
    wake-up, by which time its waiter is cancelled."""
    seen: list[str] = []

    async def record_step() -> None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            await recorder.step_recorded(step(number))
        seen.append("left the cancelled scope")

    scopes: list[anyio.CancelScope] = []
    async with anyio.create_task_group() as group:
        group.start_soon(record_step)
        assert await anyio.to_thread.run_sync(wait_until, lambda: waiting_on_a_lock(url))
        stored = committer.transactions
        holder.commit()  # the save goes through while this loop is held (no await until the cancel)
        assert wait_until(lambda: committer.transactions > stored)
        time.sleep(0.2)  # the committer settles right after it counts: its wake-up is queued by now
        scopes[0].cancel()
    return seen


def test_a_caller_cancelled_after_its_step_was_stored_but_before_it_heard_goes_on_at_once(
        postgres_url: str) -> None:
    with one_step_stored(postgres_url) as (runtime, run_id, recorder):
        seen: list[list[str]] = []
        with table_held(postgres_url) as holder:
            # In a thread of its own: a caller left waiting for an outcome that already came would never return.
            runner = threading.Thread(target=lambda: seen.append(anyio.run(
                settled_before_the_cancellation, recorder, runtime.committer, postgres_url, holder, 2)), daemon=True)
            runner.start()
            runner.join(30)

        assert seen == [["left the cancelled scope"]]
        assert [n for _, n in stored_steps(runtime)[str(run_id)]] == [1, 2]
        assert recorder._run is not None and recorder._run.steps_recorded == 2
