"""Group commit (issue 17): the steps of concurrent runs share transactions, and nothing a run was promised is lost.

Each step is stored once, in its run's order, before the run's next step is submitted; the log keeps one total
order; a version conflict of one run in a shared transaction fails that run alone.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from concurrent.futures import Future
from uuid import UUID

import anyio
import pytest
from eventsourcing.persistence import IntegrityError

from adapters.run_recorder import GroupCommitter, _Pending
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.actions import Click
from domain.agent.ports import StepRecord
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of

RUNS, STEPS = 12, 6


def step(number: int) -> StepRecord:
    return StepRecord(number=number, url=f"https://s01.lab.canitbuy.com/{number}", title="t", screenshot=None,
                      elements="b" * 64, notes="", action=Click(id=f"e{number}"), result="ok", duration_ms=1)


def started_runs(runtime: Runtime, count: int) -> list[UUID]:
    ids = schedule_runs(runtime.record, [ScheduleRun.on_course(
        station="s01", model=f"m{i}", week=week_of(runtime.clock()), requested_by="test") for i in range(count)])
    for run_id in ids:
        runtime.record.start_run(run_id, worker="w", browser_version="b", agent_version="a")
    return ids


def stored_steps(runtime: Runtime) -> dict[str, list[tuple[int, int]]]:
    """(log position, step number) of every stored step, by run, in log order."""
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for envelope in runtime.record.read_log(0, limit=100_000):
        if envelope.name == "Run.StepRecorded":
            found[envelope.originator_id].append((envelope.position, envelope.payload.step.number))
    return found


def test_concurrent_runs_share_transactions_and_each_step_is_stored_once_in_order(settings: Settings) -> None:
    with build_runtime(settings) as runtime:
        ids = started_runs(runtime, RUNS)
        before = runtime.committer.transactions

        async def one(run_id: UUID) -> None:
            recorder = runtime.recorder(run_id)
            for number in range(1, STEPS + 1):
                await recorder.step_recorded(step(number))
                await recorder.step_recorded(step(number))  # delivered twice: stored once

        async def all_runs() -> None:
            async with anyio.create_task_group() as group:
                for run_id in ids:
                    group.start_soon(one, run_id)

        anyio.run(all_runs)
        transactions = runtime.committer.transactions - before
        steps = stored_steps(runtime)
        assert transactions < RUNS * STEPS  # several runs' steps shared a transaction
        for run_id in ids:
            assert [number for _, number in steps[str(run_id)]] == list(range(1, STEPS + 1))
            assert runtime.record.get_run(run_id).steps_recorded == STEPS
        positions = [p for found in steps.values() for p, _ in found]
        assert len(set(positions)) == RUNS * STEPS  # one total order: no two events share a position


def test_a_conflict_in_a_shared_transaction_fails_that_run_alone(settings: Settings) -> None:
    with build_runtime(settings) as runtime:
        first, second = started_runs(runtime, 2)
        record = runtime.record
        stale = record.get_run(first)
        record.record_steps(first, [step(1)])  # another writer got there first: `stale` is a version behind
        stale.record_step(step(1), at=record.clock())
        fresh = record.get_run(second)
        fresh.record_step(step(1), at=record.clock())
        # The batch is formed by hand, so the test does not depend on which saves happen to arrive together.
        batch = [_Pending(stale.collect_events(), Future()), _Pending(fresh.collect_events(), Future())]
        for pending in batch:
            pending.done.set_running_or_notify_cancel()
        GroupCommitter(record)._commit(batch)
        with pytest.raises(IntegrityError):
            batch[0].done.result(0)
        assert batch[1].done.result(0) is None
        assert record.get_run(second).steps_recorded == 1
        assert [n for _, n in stored_steps(runtime)[str(first)]] == [1]  # stored once, by the first writer


def test_a_recorder_whose_run_was_cut_short_elsewhere_is_refused_and_stores_nothing(settings: Settings) -> None:
    with build_runtime(settings) as runtime:
        (run_id,) = started_runs(runtime, 1)
        recorder = runtime.recorder(run_id)
        anyio.run(recorder.step_recorded, step(1))  # the recorder now holds the run
        runtime.record.cut_short_run(run_id, "our_error", "lease lapsed", steps=1)  # the reaper, meanwhile

        with pytest.raises(IntegrityError):
            anyio.run(recorder.step_recorded, step(2))
        anyio.run(recorder.step_recorded, step(1))  # a retry of a stored step is recognised after reloading
        assert [n for _, n in stored_steps(runtime)[str(run_id)]] == [1]
        assert runtime.record.get_run(run_id).status == "cut_short"


def test_the_saves_of_one_pass_of_the_loop_share_one_transaction_split_at_the_batch_bound(settings: Settings) -> None:
    with build_runtime(settings) as runtime:
        ids = started_runs(runtime, 10)
        record = runtime.record
        runs = [record.get_run(run_id) for run_id in ids]
        committer = GroupCommitter(record, max_batch=4)
        try:
            async def all_at_once() -> None:
                saves = []
                for run in runs:
                    run.record_step(step(1), at=record.clock())
                    saves.append(committer.save(run.collect_events()))
                await asyncio.gather(*saves)

            asyncio.run(all_at_once())
            assert committer.transactions == 3  # 10 saves handed over at once: 4 + 4 + 2
            assert committer.saves == 10
        finally:
            committer.close()
        steps = stored_steps(runtime)
        assert [[n for _, n in steps[str(run_id)]] for run_id in ids] == [[1]] * 10
        positions = sorted(p for run_id in ids for p, _ in steps[str(run_id)])
        assert positions == [p for run_id in ids for p, _ in steps[str(run_id)]]  # stored in the order saved
