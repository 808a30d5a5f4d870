"""A flood of requests from one network to the submission endpoints is answered 429, with Retry-After, before its
body is read.

ARC's daily caps (5 submissions a network a day, 200 overall) count accepted submissions; they live in the record
(the `SubmissionDay` aggregate, in the same database as the submissions), so every web process counts the same
submissions. They do not stop a network that sends request after request of 200 KB that are refused: each one is
read and parsed. This guard counts requests per network and minute, in Redis when the site has one, else (and
while Redis is out) in the database (table `submission_flood`); past `PER_MINUTE` the answer costs one counter
update and nothing else: no body read, no parsing, no write to the record, nothing taken from anyone's quota.

ARC publishes no such request rate; docs/arc.md lists it among our deliberate differences.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from adapters.sqldb import SqlDb

log = logging.getLogger("canitbuy.web")

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


REDIS_SECONDS = 0.5
"""How long one count may wait on Redis before it is taken in the database instead."""
RETRY_REDIS_SECONDS = 5.0
"""While Redis is out, how long counts go to the database before Redis is asked again."""


class RedisCounter:
    """The counts in Redis: INCR a key per network and minute that expires with the minute. While Redis is out
    (refusing, or silent past `REDIS_SECONDS`) the counts go to `fallback`, the database every web process shares,
    so a submission is neither refused nor answered 500 for the site's Redis; Redis is asked again every
    `RETRY_REDIS_SECONDS`. A minute that spans an outage counts in both places, each from zero: a flood gets at
    most twice its minute's requests through, never a legitimate sender fewer."""

    def __init__(self, url: str, fallback: Counter, clock: Callable[[], float] = time.monotonic,
                 timeout: float = REDIS_SECONDS) -> None:
        from redis.asyncio import Redis

        self.redis = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        self.fallback, self.clock = fallback, clock
        self.out_until: float | None = None

    async def hit(self, network: str, minute: int) -> int:
        from redis.exceptions import RedisError

        if self.out_until is not None and self.clock() < self.out_until:
            return await self.fallback.hit(network, minute)
        key = f"canitbuy:submission-flood:{network}:{minute}"
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                count, _ = await pipe.incr(key).expire(key, 2 * WINDOW).execute()
        except (RedisError, OSError) as error:
            if self.out_until is None:
                log.warning("Redis does not answer (%s): the submission flood guard counts in the database until it "
                            "does, asked again every %g s", type(error).__name__, RETRY_REDIS_SECONDS)
            self.out_until = self.clock() + RETRY_REDIS_SECONDS
            return await self.fallback.hit(network, minute)
        if self.out_until is not None:
            log.warning("Redis answers again: the submission flood guard counts in Redis again")
            self.out_until = None
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
    database = SqlCounter(db, call)
    counter: Counter = RedisCounter(settings_redis_url, fallback=database) if settings_redis_url else database
    return FloodGuard(counter)
