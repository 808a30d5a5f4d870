"""A flood of requests from one network to the submission endpoints is answered 429, with Retry-After, before its
body is read.

ARC's daily caps (5 submissions a network a day, 200 overall) count accepted submissions; they live in the record
(the `SubmissionDay` aggregate, in the same database as the submissions), so every web process counts the same
submissions. They do not stop a network that sends request after request of 200 KB that are refused: each one is
read and parsed. This guard counts requests per network and minute, in Redis when the site has one, else in the
database (table `submission_flood`); past `PER_MINUTE` the answer costs one counter update and nothing else: no
body read, no parsing, no write to the record, nothing taken from anyone's quota.

ARC publishes no such request rate; docs/arc.md lists it among our deliberate differences.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from adapters.sqldb import SqlDb

PER_MINUTE = 60
"""Requests a network may make to /api/leaderboard/submit and /api/ask in one minute (UTC, by the clock)."""
WINDOW = 60


class Counter(Protocol):
    async def hit(self, network: str, minute: int) -> int:
        """Count one request of this network in this minute; the count so far, this one included."""
        ...


class SqlCounter:
    """The counts in the site's database (SQLite or PostgreSQL), one upsert a request."""

    def __init__(self, db: SqlDb, call: Callable[..., Any]) -> None:
        self.db, self.call = db, call

    async def hit(self, network: str, minute: int) -> int:
        return int(await self.call(self._hit, network, minute))

    def _hit(self, network: str, minute: int) -> int:
        with self.db.transaction() as tx:
            tx.execute("DELETE FROM submission_flood WHERE minute < ?", (minute - 1,))
            row = tx.fetchone(
                "INSERT INTO submission_flood (network, minute, requests) VALUES (?, ?, 1) "
                "ON CONFLICT (network, minute) DO UPDATE SET requests = submission_flood.requests + 1 "
                "RETURNING requests", (network, minute),
            )
        return int(row[0]) if row else 1


class RedisCounter:
    """The counts in Redis: INCR a key per network and minute that expires with the minute."""

    def __init__(self, url: str) -> None:
        from redis.asyncio import Redis

        self.redis = Redis.from_url(url)

    async def hit(self, network: str, minute: int) -> int:
        key = f"canitbuy:submission-flood:{network}:{minute}"
        async with self.redis.pipeline(transaction=True) as pipe:
            count, _ = await pipe.incr(key).expire(key, 2 * WINDOW).execute()
        return int(count)


class FloodGuard:
    def __init__(self, counter: Counter, per_minute: int = PER_MINUTE, clock: Callable[[], float] = time.time):
        self.counter, self.per_minute, self.clock = counter, per_minute, clock

    async def retry_after(self, network: str) -> int:
        """Count this request; 0 when it may go on, else the seconds until the network's next minute."""
        now = self.clock()
        minute = int(now // WINDOW)
        if await self.counter.hit(network, minute) <= self.per_minute:
            return 0
        return max(1, int((minute + 1) * WINDOW - now + 0.999))


def flood_guard(settings_redis_url: str | None, db: SqlDb, call: Callable[..., Any]) -> FloodGuard:
    counter: Counter = RedisCounter(settings_redis_url) if settings_redis_url else SqlCounter(db, call)
    return FloodGuard(counter)
