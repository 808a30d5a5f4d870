"""Group commit (issue 17): the steps of concurrent runs share transactions, and nothing a run was promised is lost.

Each step is stored once, in its run's order, before the run's next step is submitted; the log keeps one total
order; a version conflict of one run in a shared transaction fails that run alone.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from uuid import UUID, uuid4

import anyio
import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, ProgrammingError

from adapters.pg_recorder import OneTripRecorder
from adapters.run_recorder import GroupCommitter, _Save
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.actions import Click
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.eventlog.record import UnknownRunError
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
        loop = asyncio.new_event_loop()
        try:
            batch = [_Save(run.collect_events(), loop, loop.create_future()) for run in (stale, fresh)]
            GroupCommitter(record)._commit(batch)
            outcomes = loop.run_until_complete(
                asyncio.gather(*(save.waiter for save in batch), return_exceptions=True))
        finally:
            loop.close()
        assert isinstance(outcomes[0], IntegrityError)
        assert outcomes[1] is None
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


def test_the_runs_one_pass_of_the_loop_loads_come_in_one_hop_as_get_run_gives_them(settings: Settings) -> None:
    with build_runtime(settings) as runtime:
        ids = started_runs(runtime, 8)
        record = runtime.record
        record.record_steps(ids[0], [step(1), step(2)])
        unknown = uuid4()
        committer = GroupCommitter(record)
        asked: list[list[UUID]] = []
        load_runs = committer._load_runs
        committer._load_runs = lambda run_ids: asked.append(list(run_ids)) or load_runs(run_ids)
        try:
            async def all_at_once() -> list[Run | BaseException]:
                return await asyncio.gather(*(committer.load(run_id) for run_id in [*ids, unknown, ids[0]]),
                                            return_exceptions=True)

            loaded = asyncio.run(all_at_once())
        finally:
            committer.close()
        assert asked == [[*ids, unknown, ids[0]]]  # one hand-over, one load of them all
        assert isinstance(loaded[len(ids)], UnknownRunError)  # that run's failure alone
        for run_id, run in zip([*ids, ids[0]], [*loaded[:len(ids)], loaded[-1]], strict=True):
            assert isinstance(run, Run)
            assert vars(run) == vars(record.get_run(run_id))
        assert loaded[0] is not loaded[-1]  # two callers never share one aggregate
        assert loaded[0].steps_recorded == 2


def test_on_postgresql_the_runs_asked_for_together_are_read_in_one_select(postgres_url: str) -> None:
    with build_runtime(Settings(database_url=postgres_url)) as runtime:
        ids = started_runs(runtime, 5)
        recorder = runtime.record.recorder
        assert isinstance(recorder, OneTripRecorder)
        selects: list[int] = []
        select_events_of = recorder.select_events_of
        recorder.select_events_of = lambda run_ids: selects.append(len(run_ids)) or select_events_of(run_ids)

        async def all_at_once() -> list[Run]:
            return await asyncio.gather(*(runtime.committer.load(run_id) for run_id in ids))

        loaded = asyncio.run(all_at_once())
        assert selects == [5]
        assert [run.id for run in loaded] == ids and {run.status for run in loaded} == {"running"}


def test_a_failed_load_reaches_each_caller_and_the_next_load_succeeds(postgres_url: str) -> None:
    with build_runtime(Settings(database_url=postgres_url)) as runtime:
        first, second = started_runs(runtime, 2)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("ALTER TABLE canitbuy_events RENAME TO elsewhere")

        async def both() -> list[Run | BaseException]:
            return await asyncio.gather(runtime.committer.load(first), runtime.committer.load(second),
                                        return_exceptions=True)

        outcomes = asyncio.run(both())
        assert [type(outcome) for outcome in outcomes] == [ProgrammingError, ProgrammingError]
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("ALTER TABLE elsewhere RENAME TO canitbuy_events")
        assert asyncio.run(runtime.committer.load(first)).id == first


def test_a_caller_cancelled_while_its_run_loads_abandons_it_and_the_others_get_theirs(settings: Settings) -> None:
    with build_runtime(settings) as runtime:
        first, second = started_runs(runtime, 2)

        async def one_given_up() -> Run:
            async with anyio.create_task_group() as group:
                group.start_soon(runtime.committer.load, first)
                loading = asyncio.ensure_future(runtime.committer.load(second))
                await asyncio.sleep(0)
                assert len(runtime.committer._outboxes[asyncio.get_running_loop()]) == 2  # both have asked
                group.cancel_scope.cancel()  # the first caller gives up before its run is loaded
            return await loading

        assert asyncio.run(one_given_up()).id == second
        recorder = runtime.recorder(first)
        anyio.run(recorder.step_recorded, step(1))  # the committer carries on
        assert [n for _, n in stored_steps(runtime)[str(first)]] == [1]
