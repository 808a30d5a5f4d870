"""Run leases: one run executes in one place at a time.

What the workers need of a lease store; the table and its SQL live in adapters/leases.py (on the database the
events live in, with the database's clock unless a test passes its own).
"""

from __future__ import annotations

from typing import Protocol

from adapters.leases import Clock, Lapsed, SqlLeaseStore, open_leases

__all__ = ["DEFAULT_LEASE_SECONDS", "Clock", "Lapsed", "LeaseStore", "SqlLeaseStore", "open_leases"]

DEFAULT_LEASE_SECONDS = 30.0
"""A killed worker's run is noticed within this time; a heartbeat renews every third of it."""


class LeaseStore(Protocol):
    def acquire(self, run_id: str, holder: str, ttl: float) -> bool: ...
    def renew(self, run_id: str, holder: str, ttl: float) -> bool: ...
    def release(self, run_id: str, holder: str) -> None: ...
    def lapsed(self) -> list[Lapsed]: ...
    def forget(self, run_id: str) -> None: ...
    def close(self) -> None: ...
