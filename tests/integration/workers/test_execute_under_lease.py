"""A run is decided on as it stands once its lease is held: a worker that looked at the run, then waited for the
lease while another worker executed the run from start to end and let its lease go, must not execute it again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from uuid import UUID

import anyio
import pytest

from adapters.leases import SqlLeaseStore
from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from domain.agent.ports import StepRecord
from domain.agent.verdicts import Verdict
from domain.eventlog.record import Record
from workers.executor import execute_run
from workers.leases import open_leases
from workers.plan import schedule_course
from workers.resources import build_resources

MONDAY_MORNING = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)  # 2026-W49
WEEK = "2026-W49"


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    with build_runtime(settings, lambda: MONDAY_MORNING) as rt:
        yield rt


class _OtherWorkerFirst:
    """The real lease store, with another worker (holder "other") executing the run in full, under its own lease,
    just before our worker's first attempt to take the lease: the interleaving a requeued run can meet."""

    def __init__(self, leases: SqlLeaseStore, record: Record) -> None:
        self._leases, self._record = leases, record
        self.others_done = False

    def acquire(self, run_id: str, holder: str, ttl: float) -> bool:
        if not self.others_done:
            self.others_done = True
            rid = UUID(run_id)
            assert self._leases.acquire(run_id, "other", ttl)
            self._record.start_run(rid, worker="other", browser_version="-", agent_version="-")
            self._record.record_steps(rid, [StepRecord(number=1, url="http://s01.lab.localhost/")])
            self._record.finish_run(rid, Verdict(passed=True, outcome="passed"), steps=1, seconds=1.0)
            self._leases.release(run_id, "other")
        return self._leases.acquire(run_id, holder, ttl)

    def __getattr__(self, name: str) -> object:
        return getattr(self._leases, name)


def test_a_run_executed_elsewhere_while_the_lease_was_awaited_is_skipped_not_run_again(
        runtime: Runtime, settings: Settings) -> None:
    [run_id] = schedule_course(runtime, WEEK, ["baseline-robust"], stations=["s01"], requested_by="test")
    leases = open_leases(settings)
    racing = _OtherWorkerFirst(leases, runtime.record)
    # No lab answers at 127.0.0.1:9: a worker that went on to execute the run would record it as cut short.
    res = build_resources(runtime, racing, lab_url="http://127.0.0.1:9", directory_url=None)
    before = runtime.record.get_run(run_id).status
    try:
        outcome = anyio.run(execute_run, {"resources": res}, str(run_id))
    finally:
        leases.close()
    assert before == "scheduled" and racing.others_done
    assert outcome == "skipped: finished"
    run = runtime.record.get_run(run_id)
    # Scheduled, started, one step, finished: the other worker's four events and none of ours.
    assert (run.status, run.steps_recorded, run.version) == ("finished", 1, 4)
