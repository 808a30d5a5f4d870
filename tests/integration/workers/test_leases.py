"""A run executes in one place at a time: the lease table on each backend.

Time is a clock the test moves (issue #12 item 8): nothing sleeps against a timer. The database's own clock, used
in production, is checked once with a lease that is born lapsed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.settings import Settings
from workers.leases import SqlLeaseStore, open_leases


class Clock:
    """Seconds since the epoch, moved on by hand."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def leases(settings: Settings, clock: Clock) -> Iterator[SqlLeaseStore]:
    store = open_leases(settings, clock=clock)
    yield store
    store.close()


def test_only_one_worker_holds_a_run(leases: SqlLeaseStore) -> None:
    assert leases.acquire("run-1", "worker-a", 30)
    assert not leases.acquire("run-1", "worker-b", 30)
    assert leases.acquire("run-1", "worker-a", 30), "a retried job on the same worker takes its own lease again"


def test_a_lapsed_lease_is_seen_and_can_be_taken_over(leases: SqlLeaseStore, clock: Clock) -> None:
    assert leases.acquire("run-1", "worker-a", 30)
    clock.advance(29.9)
    assert leases.lapsed() == [] and not leases.acquire("run-1", "worker-b", 30)
    clock.advance(0.2)
    assert [lapsed.run_id for lapsed in leases.lapsed()] == ["run-1"]
    assert leases.acquire("run-1", "worker-b", 30)
    assert not leases.renew("run-1", "worker-a", 30), "the old holder learns it lost the lease"
    assert leases.lapsed() == []


def test_a_heartbeat_keeps_the_lease(leases: SqlLeaseStore, clock: Clock) -> None:
    assert leases.acquire("run-1", "worker-a", 30)
    for _ in range(10):  # five minutes of heartbeats, each a third of the lease apart
        clock.advance(10)
        assert leases.renew("run-1", "worker-a", 30)
    assert leases.lapsed() == []
    assert not leases.acquire("run-1", "worker-b", 30)


def test_a_released_run_is_free_and_forgetting_spares_a_renewed_lease(leases: SqlLeaseStore, clock: Clock) -> None:
    leases.acquire("run-1", "worker-a", 30)
    leases.release("run-1", "worker-a")
    assert leases.acquire("run-1", "worker-b", 30)
    leases.forget("run-1")
    assert not leases.acquire("run-1", "worker-c", 30), "forget removes only lapsed leases"
    clock.advance(31)
    leases.forget("run-1")
    assert leases.lapsed() == [] and leases.acquire("run-1", "worker-c", 30), "a lapsed lease is forgotten"


def test_without_a_clock_the_database_keeps_time(settings: Settings) -> None:
    store = open_leases(settings)
    try:
        assert store.acquire("run-1", "worker-a", -1), "a lease that ended a second ago, by the database's clock"
        assert [lapsed.run_id for lapsed in store.lapsed()] == ["run-1"]
        assert store.acquire("run-2", "worker-a", 3600)
        assert not store.acquire("run-2", "worker-b", 3600)
    finally:
        store.close()

