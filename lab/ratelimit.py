"""The course's rule, enforced: "at most one request per second and a few full runs a day. The stores are shared
with the weekly Matrix."

Each client has a budget of page requests: RATE a second on average with a burst of BURST (the generic cell rate
algorithm: a theoretical arrival time per client moves on by 1/rate per request; a request that would put it more
than burst/rate ahead of now is refused with 429 and Retry-After). Static assets (/static/, /img/) are not
counted: a browser fetches them with every page and they cost the lab nothing to speak of.

The client is the Web Bot Auth keyid when the request carries a signature that verifies (the verdict is left in
scope, so s13's gate and the checkout's receipt do not verify it again), else the network address: the peer, or
behind a trusted proxy the right-most address of X-Forwarded-For that is not a proxy. Keyids named as our own
agent's (`own_keyids`), and unsigned requests from our workers' networks (`own_networks`: the reading station's
fetcher does not sign), draw on a budget of their own, so a flood from anyone never slows a weekly run.

Budgets are kept in Redis when a URL is given (every lab process behind one name shares them; while it is out,
each process counts in its own memory), else in this process's memory (the embedded lab, one process). The lab
imports nothing of the project; this is its own.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from lab import render
from lab.botauth.verifier import Verifier, verified_keyid

log = logging.getLogger("lab.ratelimit")

UNCOUNTED = ("/static/", "/img/")
"""Path prefixes of static assets: never counted."""
MAX_KEYS = 50_000
"""Clients remembered in memory at most; the longest idle make room (a flood of addresses cannot grow memory)."""


@dataclass(frozen=True)
class Budget:
    rate: float
    """Requests a second on average."""
    burst: int
    """Requests allowed at once above the average (a page and what its script fetches, a quick look around)."""

    @property
    def period(self) -> float:
        return 1.0 / self.rate


PUBLIC = Budget(rate=1.0, burst=30)
"""Every client but ours: the course's one request a second, with room for a page's fetches."""
OWN = Budget(rate=20.0, burst=400)
"""Our own agent's keys: the weekly Matrix runs several stations at once and must never wait on anyone."""


@dataclass(frozen=True)
class LabLimits:
    """How the lab limits its clients (`canitbuy lab serve` options; the embedded lab sets own_keyids)."""

    own_keyids: frozenset[str] = frozenset()
    """Web Bot Auth keyids (RFC 7638 thumbprints) of our own agent: they draw on the OWN budget."""
    own_networks: tuple[str, ...] = ()
    """Networks of our own workers: their unsigned requests (the reading station's fetcher, receipt checks) draw on
    the OWN budget too. The embedded lab names loopback; a deployed lab, the workers' addresses."""
    trusted_proxies: tuple[str, ...] = ()
    """Networks whose X-Forwarded-For is believed (the lab's TLS proxy); anyone else's is ignored."""
    redis_url: str | None = None
    """Budgets in Redis (shared by lab processes) when given, else in this process's memory."""
    public: Budget = PUBLIC
    own: Budget = OWN


class Buckets(Protocol):
    async def take(self, key: str, budget: Budget) -> float:
        """Count one request of this client; 0 when it may go on, else the seconds until it may."""
        ...


@dataclass
class MemoryBuckets:
    clock: Callable[[], float] = time.monotonic
    max_keys: int = MAX_KEYS
    _arrivals: OrderedDict[str, float] = field(default_factory=OrderedDict)

    def __len__(self) -> int:
        return len(self._arrivals)

    async def take(self, key: str, budget: Budget) -> float:
        now = self.clock()
        due = max(self._arrivals.get(key, now), now) + budget.period
        ahead = due - now - budget.burst * budget.period
        if ahead > 0:
            return ahead
        self._arrivals[key] = due
        self._arrivals.move_to_end(key)
        while len(self._arrivals) > self.max_keys:  # the client idle longest is the one nearest a full budget
            self._arrivals.popitem(last=False)
        return 0.0


# KEYS[1] the client; ARGV period and burst in microseconds. Redis's own clock, so lab processes on several hosts
# agree; the key expires when the client's budget is full again.
_GCRA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local period, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local due = math.max(tonumber(redis.call('GET', KEYS[1]) or now), now) + period
local ahead = due - now - burst
if ahead > 0 then return ahead end
redis.call('SET', KEYS[1], due, 'PX', math.ceil((due - now) / 1000) + 1)
return 0
"""


REDIS_SECONDS = 0.5
"""How long one budget may wait on Redis before the request is counted in this process's memory instead."""
RETRY_REDIS_SECONDS = 5.0
"""While Redis is out, how long requests are counted in memory before Redis is asked again."""


class RedisBuckets:
    """Budgets in Redis, shared by every lab process; while Redis is out (refusing, or silent past `REDIS_SECONDS`)
    each process counts in its own memory, so the lab keeps answering and keeps limiting (per process, not as
    one) instead of answering 500 to every page: a station that failed because the lab's Redis did would be
    scored as the agent's failure. Redis is asked again every `RETRY_REDIS_SECONDS`; the outage and the recovery
    are each logged once."""

    def __init__(self, url: str, prefix: str = "nordlys-lab:budget:", clock: Callable[[], float] = time.monotonic,
                 timeout: float = REDIS_SECONDS) -> None:
        from redis.asyncio import Redis

        self.redis: Any = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        self.prefix, self.clock = prefix, clock
        self.memory = MemoryBuckets(clock=clock)
        self.out_until: float | None = None
        """While Redis is out: when to ask it again."""

    async def take(self, key: str, budget: Budget) -> float:
        from redis.exceptions import RedisError

        if self.out_until is not None and self.clock() < self.out_until:
            return await self.memory.take(key, budget)
        micro = round(budget.period * 1_000_000)
        try:
            ahead = await self.redis.eval(_GCRA, 1, self.prefix + key, micro, micro * budget.burst)
        except (RedisError, OSError) as error:
            if self.out_until is None:
                log.warning("Redis does not answer (%s): request budgets are kept in this process's memory until "
                            "it does, asked again every %g s", type(error).__name__, RETRY_REDIS_SECONDS)
            self.out_until = self.clock() + RETRY_REDIS_SECONDS
            return await self.memory.take(key, budget)
        if self.out_until is not None:
            log.warning("Redis answers again: request budgets are shared by the lab's processes again")
            self.out_until = None
        return int(ahead) / 1_000_000


def buckets_for(limits: LabLimits) -> Buckets:
    return RedisBuckets(limits.redis_url) if limits.redis_url else MemoryBuckets()


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _within(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def networks(named: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(n, strict=False) for n in named)


class ClientAddress:
    """The client's address: the peer, or behind a trusted proxy the right-most X-Forwarded-For hop not a proxy
    (each proxy appends what it saw; hops further left were written by the client and prove nothing)."""

    def __init__(self, trusted: tuple[str, ...]) -> None:
        self.trusted = networks(trusted)

    def _trusts(self, address: str) -> bool:
        return _within(address, self.trusted)

    def of(self, scope: Scope) -> str:
        peer = (scope.get("client") or ("unknown", 0))[0]
        if not self.trusted or not self._trusts(peer):
            return str(peer)
        hops = [hop.strip() for line in Headers(scope=scope).getlist("x-forwarded-for") for hop in line.split(",")]
        client = str(peer)
        for hop in reversed(hops):
            try:
                client = str(ipaddress.ip_address(hop))
            except ValueError:
                break
            if not self._trusts(client):
                break
        return client


class RateLimit:
    def __init__(self, app: ASGIApp, limits: LabLimits, verifier: Verifier, buckets: Buckets | None = None) -> None:
        self.app, self.limits, self.verifier = app, limits, verifier
        self.buckets = buckets or buckets_for(limits)
        self.address = ClientAddress(limits.trusted_proxies)
        self.own_networks = networks(limits.own_networks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(UNCOUNTED):
            return await self.app(scope, receive, send)
        keyid = await verified_keyid(scope, self.verifier)
        if keyid is not None and keyid in self.limits.own_keyids:
            key, budget = f"own:{keyid}", self.limits.own
        elif keyid is not None:
            key, budget = f"key:{keyid}", self.limits.public
        else:
            address = self.address.of(scope)
            own = _within(address, self.own_networks)
            key, budget = f"{'own-net' if own else 'addr'}:{address}", self.limits.own if own else self.limits.public
        wait = await self.buckets.take(key, budget)
        if wait <= 0:
            return await self.app(scope, receive, send)
        await self._refuse(send, max(1, math.ceil(wait)), budget)

    async def _refuse(self, send: Send, retry_after: int, budget: Budget) -> None:
        body = render.render_text(
            "error.html",
            title="Too many requests",
            message=f"The course asks agents for at most one request a second and a few full runs a day: the "
            f"stores are shared with the weekly Matrix. This client has made more than {budget.burst} requests "
            f"above that pace. Please wait {retry_after} seconds, then go on more slowly.",
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 429,
                "headers": [
                    (b"content-type", b"text/html; charset=utf-8"),
                    (b"retry-after", str(retry_after).encode()),
                    (b"cache-control", b"no-store"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
