"""Sign-in attempts, limited per account and per client address (sliding window, in this process's memory).

Failures count; a success clears the account's count. Per account it stops guessing one password; per address it
stops one client from trying many accounts. Counts live in memory, so each site process limits on its own.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable

WINDOW = 15 * 60
PER_ACCOUNT = 5
PER_ADDRESS = 20


class SignInLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic, window: float = WINDOW,
                 per_account: int = PER_ACCOUNT, per_address: int = PER_ADDRESS) -> None:
        self._clock, self._window = clock, window
        self._limits = {"account": per_account, "address": per_address}
        self._failures: dict[tuple[str, str], deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, key: tuple[str, str]) -> deque[float]:
        times, edge = self._failures[key], self._clock() - self._window
        while times and times[0] < edge:
            times.popleft()
        return times

    def retry_after(self, account: str, address: str) -> int:
        """Seconds to wait before another attempt is allowed; 0 when it is allowed now."""
        with self._lock:
            waits = []
            for kind, name in (("account", account), ("address", address)):
                times = self._recent((kind, name))
                if len(times) >= self._limits[kind]:
                    waits.append(times[0] + self._window - self._clock())
            return max(1, int(max(waits)) + 1) if waits else 0

    def failed(self, account: str, address: str) -> None:
        with self._lock:
            now = self._clock()
            self._failures[("account", account)].append(now)
            self._failures[("address", address)].append(now)

    def succeeded(self, account: str) -> None:
        with self._lock:
            self._failures.pop(("account", account), None)
