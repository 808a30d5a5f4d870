"""A run executes in one place at a time: the lease table on each backend, with the database's clock."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from adapters.settings import Settings
from workers.leases import SqlLeaseStore, open_leases


@pytest.fixture
def leases(settings: Settings) -> Iterator[SqlLeaseStore]:
    store = open_leases(settings)
    yield store
    store.close()


def test_only_one_worker_holds_a_run(leases: SqlLeaseStore) -> None:
    assert leases.acquire("run-1", "worker-a", 30)
    assert not leases.acquire("run-1", "worker-b", 30)
    assert leases.acquire("run-1", "worker-a", 30), "a retried job on the same worker takes its own lease again"


def test_a_lapsed_lease_is_seen_and_can_be_taken_over(leases: SqlLeaseStore) -> None:
    assert leases.acquire("run-1", "worker-a", 0.3)
    time.sleep(0.5)
    assert [lapsed.run_id for lapsed in leases.lapsed()] == ["run-1"]
    assert leases.acquire("run-1", "worker-b", 30)
    assert not leases.renew("run-1", "worker-a", 30), "the old holder learns it lost the lease"
    assert leases.lapsed() == []


def test_a_heartbeat_keeps_the_lease(leases: SqlLeaseStore) -> None:
    assert leases.acquire("run-1", "worker-a", 0.4)
    for _ in range(3):
        time.sleep(0.2)
        assert leases.renew("run-1", "worker-a", 0.4)
    assert leases.lapsed() == []
    assert not leases.acquire("run-1", "worker-b", 30)


def test_a_released_run_is_free_and_forgetting_spares_a_renewed_lease(leases: SqlLeaseStore) -> None:
    leases.acquire("run-1", "worker-a", 30)
    leases.release("run-1", "worker-a")
    assert leases.acquire("run-1", "worker-b", 30)
    leases.forget("run-1")
    assert not leases.acquire("run-1", "worker-c", 30), "forget removes only lapsed leases"
