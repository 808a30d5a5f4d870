"""Per-provider limits on calls to the gateway: how many at once, and a pause every worker keeps after a 429.

The gateway routes `provider/model`; each provider has its own rate limits behind it. A 429 with Retry-After
from the gateway says that provider is saturated: not only the call that met it but every call to the same
provider waits that long. With several worker processes the pause is shared through Redis (a key per provider
that expires when the pause ends); in one process it is kept in memory. The number of calls at once is limited
per provider in each process (CANITBUY_PROVIDER_CONCURRENCY, e.g. "anthropic=2,*=4"); the time a call waits for a
free place is our throttling, so the caller hears of it (`on_queue`) and a run does not count it in its seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol

DEFAULT_CONCURRENCY = 4
MAX_PAUSE_SECONDS = 60.0
"""A Retry-After longer than this is taken as this: the client's own attempts and back-off take over."""


def provider_of(route: str) -> str:
    """The provider of a gateway route: openai/gpt-6-luna -> openai."""
    return route.split("/", 1)[0] if "/" in route else "*"


def parse_limits(text: str) -> dict[str, int]:
    """"anthropic=2,*=4" -> {"anthropic": 2, "*": 4}; raises ValueError with the part it cannot read."""
    limits: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, number = part.partition("=")
        digits = number.strip()
        if not name.strip() or not (digits.isascii() and digits.isdigit()) or int(digits) < 1:
            raise ValueError(f"not provider=N: {part!r}")
        limits[name.strip()] = int(digits)
    return limits


class PauseStore(Protocol):
    async def pause(self, provider: str, seconds: float) -> None: ...

    async def remaining(self, provider: str) -> float:
        """Seconds the provider's pause still lasts (0 when none)."""
        ...


class MemoryPauses:
    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    async def pause(self, provider: str, seconds: float) -> None:
        self._until[provider] = max(self._until.get(provider, 0.0), time.monotonic() + seconds)

    async def remaining(self, provider: str) -> float:
        return max(self._until.get(provider, 0.0) - time.monotonic(), 0.0)


class RedisPauses:
    """The pause as a Redis key per provider that expires when the pause ends: every worker sees it."""

    def __init__(self, redis: Any, prefix: str = "canitbuy:model-pause:") -> None:
        self._redis, self._prefix = redis, prefix

    async def pause(self, provider: str, seconds: float) -> None:
        key, ms = self._prefix + provider, max(int(seconds * 1000), 1)
        # Keep the longer of two pauses: set when absent, else lengthen only.
        if not await self._redis.set(key, "1", px=ms, nx=True):
            left = await self._redis.pttl(key)
            if left < ms:
                await self._redis.pexpire(key, ms)

    async def remaining(self, provider: str) -> float:
        left = int(await self._redis.pttl(self._prefix + provider))
        return max(left, 0) / 1000

    async def aclose(self) -> None:
        await self._redis.aclose()


class ProviderGate:
    def __init__(self, pauses: PauseStore | None = None, limits: Mapping[str, int] | None = None) -> None:
        self.pauses = pauses if pauses is not None else MemoryPauses()
        self._limits = dict(limits or {})
        self._slots: dict[str, asyncio.Semaphore] = {}

    def limit(self, provider: str) -> int:
        return self._limits.get(provider, self._limits.get("*", DEFAULT_CONCURRENCY))

    @asynccontextmanager
    async def slot(self, route: str, on_pause: Callable[[str], object] | None = None,
                   on_queue: Callable[[bool], object] | None = None) -> AsyncIterator[None]:
        """One call to the route's provider: waits for a free place and for the provider's pause to end.
        `on_pause` hears of a pause waited out: that time is the connection's, not the model's. `on_queue` hears
        True when the call has to wait for a free place (every place of this process taken by other calls) and
        False once it has one, or has stopped waiting: that time is our own limit's, neither the model's nor the
        connection's."""
        provider = provider_of(route)
        semaphore = self._slots.setdefault(provider, asyncio.Semaphore(self.limit(provider)))
        queued = on_queue is not None and semaphore.locked()
        if queued and on_queue is not None:
            on_queue(True)
        try:
            await semaphore.acquire()
        finally:
            if queued and on_queue is not None:
                on_queue(False)
        try:
            while (left := await self.pauses.remaining(provider)) > 0:
                if on_pause is not None:
                    on_pause(f"{provider} paused after HTTP 429 from the gateway")
                    on_pause = None
                await asyncio.sleep(min(left, 1.0))
            yield
        finally:
            semaphore.release()

    async def aclose(self) -> None:
        closing = getattr(self.pauses, "aclose", None)
        if closing is not None:
            await closing()

    async def saturated(self, route: str, retry_after: float) -> None:
        await self.pauses.pause(provider_of(route), min(retry_after, MAX_PAUSE_SECONDS))
