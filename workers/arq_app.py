"""The arq side: `WorkerSettings` for `canitbuy worker`, the queue client used to enqueue runs, the cron tick.

Jobs carry only a run id (msgspec msgpack on the wire, never pickle) and the job id is the run id, so enqueueing
a run that is already queued or executing is a no-op. The job timeout follows the run's own limit: 150 s plus
a margin for launching a context and recording, so a job whose worker was killed is taken again after about
four minutes instead of arq's default of five; the lease lets the reaper cut such a run short much sooner.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Sequence
from typing import Any

import anyio.to_thread
import msgspec
from arq import Retry, cron
from arq.connections import ArqRedis, RedisSettings
from arq.worker import func
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeout

from adapters.botauth import signing_problem
from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.episode import MAX_SECONDS
from workers.executor import execute_run
from workers.leases import DEFAULT_LEASE_SECONDS, open_leases
from workers.ledger import RunLedger
from workers.reaper import reap
from workers.resources import Resources, build_resources
from workers.schedule import scheduled_catch_up

log = logging.getLogger("canitbuy.worker")

QUEUE = "canitbuy:runs"
JOB = "execute_run"
JOB_TIMEOUT = MAX_SECONDS + 60
MAX_TRIES = 3
POLL_DELAY = 0.1
"""Enqueue-to-start is about 30x the poll delay at p50; runs last tens of seconds, so 0.1 s costs nothing."""

_encoder = msgspec.msgpack.Encoder(enc_hook=repr)  # a failed job's exception is kept as its repr


def serialize(value: Any) -> bytes:
    return _encoder.encode(value)


def deserialize(data: bytes) -> Any:
    return msgspec.msgpack.decode(data)


class RedisUnreachable(ConnectionError):
    """Redis did not answer: the message says where (host:port, never the password) and why, in one line."""


REACH_SECONDS = 5.0
"""How long connecting to Redis and its first answer may take at start before a command says Redis is unreachable."""
ANSWER_SECONDS = 15.0
"""How long one Redis command may wait for its answer once connected. arq sets no read time-out: a Redis that
accepted connections and stopped answering (a paused process, a half-open connection through a firewall) held a
worker forever, idle and looking alive. Nothing the queue or the worker sends blocks on the server's side (arq polls
with plain reads), so an answer later than this is a Redis that is gone: the worker ends in one line and its
supervisor starts it again; the runs it held are taken again when their leases run out."""


def redis_settings(settings: Settings) -> RedisSettings:
    """arq's settings for CANITBUY_REDIS_URL. Without arq's retries at start (five, a second apart, each logged as
    a warning before the same failure): a command meeting a dead Redis says so at once in one line, and a worker's
    supervisor restarts it. Once connected, redis-py reconnects as it did."""
    if not settings.redis_url:
        raise ValueError("CANITBUY_REDIS_URL is not set")
    return dataclasses.replace(RedisSettings.from_dsn(settings.redis_url), conn_retries=0)


async def queue_pool(settings: Settings) -> ArqRedis:
    """The queue's Redis, reached and answering, with time-outs on every command (`ANSWER_SECONDS`): for the
    worker (`canitbuy worker`) and for the commands that enqueue. Redis refusing, or not answering within
    `REACH_SECONDS`, raises `RedisUnreachable` saying where and why."""
    url = settings.redis_url
    if not url:
        raise ValueError("CANITBUY_REDIS_URL is not set")
    redis_settings(settings)  # the URL as arq reads it: a scheme or port it cannot read fails here, as before
    pool: ArqRedis = ArqRedis.from_url(url, socket_connect_timeout=REACH_SECONDS, socket_timeout=ANSWER_SECONDS,
                             encoding="utf8")
    pool.job_serializer, pool.job_deserializer, pool.default_queue_name = serialize, deserialize, QUEUE
    try:
        await asyncio.wait_for(pool.ping(), REACH_SECONDS)
    except (TimeoutError, RedisError, OSError) as error:
        await pool.aclose()
        raise redis_unreachable(url, error, REACH_SECONDS) from None
    return pool


def redis_unreachable(url: str, error: BaseException, seconds: float) -> RedisUnreachable:
    """What `error` (from reaching the Redis at `url`, waiting at most `seconds`) says, as one line: where and why
    ("connection refused", "no answer within 1 s"); the URL's password is never in it."""
    try:
        named = RedisSettings.from_dsn(url)
        where = named.unix_socket_path or f"{named.host}:{named.port}"
    except ValueError:  # a port that is not one: as typed, without the credentials
        where = url.partition("://")[2].rpartition("@")[2]
    cause = error.__cause__ or error.__context__
    if isinstance(error, RedisTimeout | TimeoutError) or isinstance(cause, TimeoutError):
        why = f"no answer within {seconds:g} s"
    elif isinstance(cause, OSError) and (cause.errno or cause.strerror):
        # the errno's own words: asyncio's refusal says "Connect call failed (...)" where errno 111 says why
        said = os.strerror(cause.errno) if cause.errno and cause.errno > 0 else str(cause.strerror)
        why = said[:1].lower() + said[1:]
    else:
        why = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return RedisUnreachable(f"cannot reach Redis at {where} (CANITBUY_REDIS_URL): {why}")


async def enqueue_runs(pool: ArqRedis, run_ids: Sequence[str]) -> int:
    """Enqueue each run under its own id; returns how many were new to the queue."""
    fresh = 0
    for run_id in run_ids:
        if await pool.enqueue_job(JOB, run_id, _job_id=run_id) is not None:
            fresh += 1
    return fresh


async def execute_run_job(ctx: dict[str, Any], run_id: str) -> str:
    """The arq job: execute_run, with infrastructure failures retried visibly (try n of MAX_TRIES)."""
    tried = ctx.get("job_try", 1)
    if tried > 1:
        log.warning("run %s: try %d of %d", run_id, tried, MAX_TRIES)
    try:
        return await execute_run(ctx, run_id)
    except Exception as error:
        if tried >= MAX_TRIES:
            log.error("run %s: giving up after %d tries: %s", run_id, tried, error)
            raise
        log.warning("run %s: try %d failed (%s); retrying", run_id, tried, error)
        raise Retry(defer=5 * tried) from error


async def requeue_open_runs(ledger: RunLedger, pool: ArqRedis) -> int:
    """Runs scheduled but not finished, found in the event log, go back on the queue (e.g. after Redis lost
    its queue). Jobs still queued or executing keep their id, so this never doubles one."""
    await anyio.to_thread.run_sync(ledger.refresh)
    return await enqueue_runs(pool, [r.run_id for r in ledger.open_runs()])


async def schedule_tick(ctx: dict[str, Any]) -> str:
    """Reap lapsed leases, do what the schedule says is due, and requeue open runs."""
    res: Resources = ctx["resources"]
    await _reap_here(res)
    summary = await scheduled_catch_up(ctx, res.runtime.record.clock())
    ledger: RunLedger = ctx.setdefault("ledger", RunLedger(res.runtime.record))
    requeued = await requeue_open_runs(ledger, ctx["redis"])
    return f"{summary}; {requeued} requeued"


async def _reap_here(res: Resources) -> list[str]:
    """The reaper as this worker runs it (in a thread): never on the runs it is executing itself, as they are
    now (a copy taken on the event loop, which alone changes the set)."""
    executing = frozenset(res.executing)
    return await anyio.to_thread.run_sync(
        lambda: reap(res.runtime, res.leases, holder=res.worker_name, executing=executing))


async def _reap_forever(res: Resources) -> None:
    while True:
        await asyncio.sleep(res.lease_seconds)
        try:
            await _reap_here(res)
        except Exception:  # noqa: BLE001 - the database may be restarting; the next round tries again
            log.warning("reaping lapsed leases failed", exc_info=True)


async def _open_runtime(settings: Settings) -> Any:
    """The record; a fresh database's tables may be being created by another process at the same moment."""
    from eventsourcing.persistence import IntegrityError

    for attempt in range(5):
        try:
            return await anyio.to_thread.run_sync(build_runtime, settings)
        except IntegrityError:
            if attempt == 4:
                raise
            await asyncio.sleep(0.5 + attempt)
    raise AssertionError("unreachable")


async def startup(ctx: dict[str, Any]) -> None:
    settings: Settings = ctx.get("settings") or Settings.from_env()
    lab_url = ctx.get("lab_url") or settings.lab_url
    if not lab_url:
        raise RuntimeError("a worker needs CANITBUY_LAB_URL (where the stations answer)")
    problem = signing_problem(lab_url, ctx.get("directory_url") or settings.agent_directory_url)
    if problem:  # every s13 run would meet the gate unsigned: our configuration, so no run starts
        raise RuntimeError(f"cannot sign runs: {problem}")
    runtime = await _open_runtime(settings)
    leases = open_leases(settings)
    res = build_resources(runtime, leases, lab_url=lab_url, directory_url=ctx.get("directory_url"),
                          lease_seconds=ctx.get("lease_seconds", DEFAULT_LEASE_SECONDS))
    ctx["resources"] = res
    await anyio.to_thread.run_sync(reap, runtime, leases)
    ctx["reaper"] = asyncio.create_task(_reap_forever(res))
    log.info("worker %s ready (lab %s, lease %.0fs)", res.worker_name, lab_url, res.lease_seconds)


async def shutdown(ctx: dict[str, Any]) -> None:
    reaper = ctx.pop("reaper", None)
    if reaper is not None:
        reaper.cancel()
    res: Resources | None = ctx.pop("resources", None)
    if res is not None:
        await res.aclose()
        res.runtime.close()


class WorkerSettings:
    """Start with `canitbuy worker`, which adds the Redis settings and concurrency from the environment."""

    functions = [func(execute_run_job, name=JOB, timeout=JOB_TIMEOUT, max_tries=MAX_TRIES, keep_result=60)]
    cron_jobs = [cron(schedule_tick, name="schedule_tick", minute=set(range(0, 60, 5)), run_at_startup=True,
                      unique=True, timeout=600)]
    queue_name = QUEUE
    on_startup = startup
    on_shutdown = shutdown
    job_serializer = staticmethod(serialize)
    job_deserializer = staticmethod(deserialize)
    job_timeout = JOB_TIMEOUT
    poll_delay = POLL_DELAY
    max_tries = MAX_TRIES
    keep_result = 60
