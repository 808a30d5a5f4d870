"""Sign-in attempts, limited per account from one client address and per client address (sliding window), in
the site's database (SqlSignInLimiter, what the site uses: every web process counts the same attempts) or in
memory (SignInLimiter).

An attempt is counted before its password is hashed, so a burst of simultaneous guesses meets the limit as a
slow series would; a success takes the count of its account from its address back, and its own attempt off the
address's. A refused attempt stores nothing. Per account and address it stops one client guessing one password;
per address it stops one client from trying many accounts. The account's limit is not counted from everywhere
at once: then five wrong passwords typed by anyone would lock the account for its own people too (a denial of
service costing five requests); counted per address, a client that fails locks out only itself.

In the database the attempts of the window are rows (older ones are deleted at each attempt), and one attempt is
counted at a time across processes (SQLite's write lock, or a PostgreSQL advisory lock), so a burst spread over
every web process meets the limit as one process would. In memory at most MAX_KEYS names are held.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio

from adapters.sqldb import SqlDb, Tx

WINDOW = 15 * 60
PER_ACCOUNT = 5
"""Attempts on one account from one client address."""
PER_ADDRESS = 20
"""Attempts from one client address, on any accounts."""
ACCOUNT, ADDRESS = "account_address", "address"
"""The two kinds of count (the account's is named by the account and the address together)."""
MAX_KEYS = 10_000
"""Names (accounts and addresses) remembered at most: guesses at random e-mails must not grow memory."""
HASHES_AT_ONCE = 2
"""Passwords hashed at once in one process: argon2id takes 64 MiB for each."""


def _counted(account: str, address: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """The counts an attempt goes to: its account from its address (an address holds no space, so the name is
    unambiguous), and its address."""
    return (ACCOUNT, f"{account} {address}"), (ADDRESS, address)


class SignInLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic, window: float = WINDOW,
                 per_account: int = PER_ACCOUNT, per_address: int = PER_ADDRESS, max_keys: int = MAX_KEYS) -> None:
        self._clock, self._window, self._max_keys = clock, window, max_keys
        self._limits = {ACCOUNT: per_account, ADDRESS: per_address}
        self._attempts: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many names (accounts and addresses) the limiter holds now."""
        return len(self._attempts)

    def _recent(self, key: tuple[str, str]) -> int:
        times = self._attempts.get(key)
        if times is None:
            return 0
        edge = self._clock() - self._window
        while times and times[0] < edge:
            times.popleft()
        if not times:
            del self._attempts[key]
            return 0
        return len(times)

    def _wait(self, account: str, address: str) -> int:
        waits = [self._attempts[(kind, name)][0] + self._window - self._clock()
                 for kind, name in _counted(account, address)
                 if self._recent((kind, name)) >= self._limits[kind]]
        return max(1, int(max(waits)) + 1) if waits else 0

    def attempt(self, account: str, address: str) -> int:
        """Count an attempt and return 0 when it may go on; else the seconds to wait (and nothing is counted)."""
        with self._lock:
            wait = self._wait(account, address)
            if wait:
                return wait
            if len(self._attempts) + 2 > self._max_keys:  # an attempt may add two names
                self._make_room(2)
            now = self._clock()
            for key in _counted(account, address):
                self._attempts.setdefault(key, deque()).append(now)
            return 0

    def retry_after(self, account: str, address: str) -> int:
        """Seconds to wait before another attempt is allowed; 0 when it is allowed now (nothing is counted)."""
        with self._lock:
            return self._wait(account, address)

    def succeeded(self, account: str, address: str) -> None:
        """A right password: the account starts afresh from this address, which is not charged for this attempt."""
        pair, by_address = _counted(account, address)
        with self._lock:
            self._attempts.pop(pair, None)
            times = self._attempts.get(by_address)
            if times:
                times.pop()
                if not times:
                    del self._attempts[by_address]

    def _make_room(self, names: int) -> None:
        for key in list(self._attempts):
            self._recent(key)
        while self._attempts and len(self._attempts) + names > self._max_keys:  # forget the names seen longest ago
            del self._attempts[next(iter(self._attempts))]


_LOCK = 0x5349474E  # "SIGN": PostgreSQL advisory lock that makes attempts count one at a time


class SqlSignInLimiter:
    """The same limits, kept in the sign_in_attempts table of the site's database (shared by its processes)."""

    def __init__(self, db: SqlDb, clock: Callable[[], float] = time.time, window: float = WINDOW,
                 per_account: int = PER_ACCOUNT, per_address: int = PER_ADDRESS) -> None:
        self.db, self._clock, self._window = db, clock, window
        self._limits = {ACCOUNT: per_account, ADDRESS: per_address}

    def __len__(self) -> int:
        with self.db.transaction() as tx:
            row = tx.fetchone("SELECT COUNT(*) FROM (SELECT DISTINCT kind, name FROM sign_in_attempts "
                              "WHERE at > ?) AS names", (self._clock() - self._window,))
        return int(row[0]) if row else 0

    def _wait(self, tx: Tx, account: str, address: str, now: float) -> int:
        waits = []
        for kind, name in _counted(account, address):
            row = tx.fetchone("SELECT COUNT(*), MIN(at) FROM sign_in_attempts WHERE kind = ? AND name = ? AND at > ?",
                              (kind, name, now - self._window))
            if row and int(row[0]) >= self._limits[kind]:
                waits.append(float(row[1]) + self._window - now)
        return max(1, int(max(waits)) + 1) if waits else 0

    def _locked(self, tx: Tx) -> float:
        if tx.postgres:
            tx.fetchone("SELECT pg_advisory_xact_lock(?)", (_LOCK,))
        return self._clock()

    def attempt(self, account: str, address: str) -> int:
        """Count an attempt and return 0 when it may go on; else the seconds to wait (and nothing is counted)."""
        with self.db.transaction() as tx:
            now = self._locked(tx)
            tx.execute("DELETE FROM sign_in_attempts WHERE at <= ?", (now - self._window,))
            wait = self._wait(tx, account, address, now)
            if not wait:
                rows = [(uuid.uuid4().hex, kind, name, now) for kind, name in _counted(account, address)]
                tx.executemany("INSERT INTO sign_in_attempts (id, kind, name, at) VALUES (?, ?, ?, ?)", rows)
        return wait

    def retry_after(self, account: str, address: str) -> int:
        with self.db.transaction() as tx:
            return self._wait(tx, account, address, self._locked(tx))

    def succeeded(self, account: str, address: str) -> None:
        """A right password: the account starts afresh from this address, which is not charged for this attempt."""
        (pair_kind, pair), (address_kind, _) = _counted(account, address)
        with self.db.transaction() as tx:
            self._locked(tx)
            tx.execute("DELETE FROM sign_in_attempts WHERE kind = ? AND name = ?", (pair_kind, pair))
            tx.execute("DELETE FROM sign_in_attempts WHERE id = (SELECT id FROM sign_in_attempts WHERE "
                       "kind = ? AND name = ? ORDER BY at DESC LIMIT 1)", (address_kind, address))


class SignInTurns:
    """One attempt at a time per (account, address), and a process-wide cap on password hashes."""

    def __init__(self, hashes_at_once: int = HASHES_AT_ONCE) -> None:
        self.hashing = anyio.CapacityLimiter(hashes_at_once)
        self._locks: dict[tuple[str, str], tuple[anyio.Lock, int]] = {}

    @asynccontextmanager
    async def turn(self, account: str, address: str) -> AsyncIterator[None]:
        key = (account, address)
        lock, users = self._locks.get(key) or (anyio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]  # nobody waits: hold nothing for this pair
            else:
                self._locks[key] = (lock, users - 1)
