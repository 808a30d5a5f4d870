"""`canitbuy worker [--check]`: an arq worker executing runs (start as many as you like, on any machine).

It needs CANITBUY_REDIS_URL, CANITBUY_LAB_URL and CANITBUY_AGENT_DIRECTORY_URL, a key directory that lab can
reach (and the same database as every other process): a worker whose runs the lab could not verify would send
every run into s13's bot gate unsigned, so it refuses to start. `--check` says whether this machine reaches
Redis, the database and Chromium, and whether the key directory serves our key, and exits 0 or 1: a health check
for systemd, compose or a load balancer.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Any

from adapters.listening import database_problem
from adapters.settings import Settings, SettingsError
from ops import arguments
from ops.cli import CommandError
from ops.commands import HELP, Subcommands

CHECK_SECONDS = 20
"""How long each of `--check`'s probes may take."""
CONNECT_SECONDS = 5
"""How long Redis and the database may take to answer `--check`."""


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    worker = subcommands.add_parser("worker", help=HELP["worker"])
    worker.add_argument("--check", action="store_true", help="check Redis, the database and Chromium; exit 0/1")
    worker.add_argument("--lease-seconds", type=arguments.seconds(0, 3600), default=None,
                        help="how soon a killed worker's run is noticed (default 30)")
    worker.add_argument("--schedule", action="store_true",
                        help="also keep the schedule (line-up Monday 06:00 UTC, repeats 14:00, publication); "
                             "safe on several workers at once")
    worker.add_argument("--burst", action="store_true", help="stop when the queue is empty (tests, batch jobs)")
    worker.set_defaults(handler=run_worker)
    return worker


def run_worker(args: argparse.Namespace) -> int:
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise CommandError(str(error)) from None
    if args.check:
        return asyncio.run(_check(settings))
    if not settings.redis_url:
        raise CommandError("CANITBUY_REDIS_URL is not set: without Redis, runs execute in-process (week run)")
    if not settings.lab_url:
        raise CommandError("CANITBUY_LAB_URL is not set: a worker must know where the stations answer")
    from adapters.botauth import signing_problem

    problem = signing_problem(settings.lab_url, settings.agent_directory_url)
    if problem:
        raise CommandError(f"cannot sign runs: {problem}")
    from arq.worker import run_worker as arq_run_worker
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeout

    from workers.arq_app import (
        ANSWER_SECONDS,
        RedisUnreachable,
        WorkerSettings,
        queue_pool,
        redis_unreachable,
        shutdown,
    )
    from workers.leases import DEFAULT_LEASE_SECONDS

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    ctx = {"settings": settings, "lease_seconds": args.lease_seconds or DEFAULT_LEASE_SECONDS}
    extra: dict[str, Any] = {} if args.schedule else {"cron_jobs": []}
    # The worker's loop is this one (arq takes the current loop), so the pool reached here is the worker's own.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        pool = loop.run_until_complete(queue_pool(settings))
        arq_run_worker(WorkerSettings, redis_pool=pool,  # type: ignore[arg-type]
                       max_jobs=settings.concurrency, ctx=ctx, burst=args.burst, **extra)
    except RedisUnreachable as error:  # at start: refused, or no answer within a few seconds
        raise CommandError(str(error)) from None
    except (RedisConnectionError, RedisTimeout) as error:  # Redis gone, or silent, while working
        raise CommandError(str(redis_unreachable(settings.redis_url, error, ANSWER_SECONDS))) from None
    finally:
        # arq's own close stops at the first command Redis does not answer, before the shutdown hook: close the
        # runs' resources (browser, database, the reaper) here too; once closed, the hook does nothing.
        loop.run_until_complete(shutdown(ctx))
        loop.close()
        asyncio.set_event_loop(None)
    return 0


async def _check(settings: Settings) -> int:
    checks = {"redis": _redis(settings), "database": _database(settings), "chromium": _chromium(settings),
              "signing": _signing(settings)}
    failed = 0
    for name, probe in checks.items():
        try:
            detail = await asyncio.wait_for(probe, CHECK_SECONDS)
            print(f"ok    {name}: {detail}")
        except TimeoutError:
            failed += 1
            print(f"FAIL  {name}: no answer within {CHECK_SECONDS} s")
        except Exception as error:  # noqa: BLE001 - every failure is reported, in one line
            failed += 1
            said = str(error) if isinstance(error, Unreachable) else f"{type(error).__name__}: {error}"
            print(f"FAIL  {name}: {said}".splitlines()[0])
    return 1 if failed else 0


class SigningError(RuntimeError):
    pass


class Unreachable(ConnectionError):
    """A service this machine cannot reach; the message says which, where (never a password) and why."""


async def _signing(settings: Settings) -> str:
    """Whether the lab can verify our signatures: the configuration, then our directory serving our key."""
    import httpx

    from adapters.botauth import DIRECTORY_PATH, load_or_create_key, public_jwk, signing_problem, thumbprint

    if not settings.lab_url:
        raise SigningError("CANITBUY_LAB_URL is not set: a worker must know where the stations answer")
    problem = signing_problem(settings.lab_url, settings.agent_directory_url)
    if problem or not settings.agent_directory_url:
        raise SigningError(problem or "no key directory")
    keyid = thumbprint(public_jwk(load_or_create_key(settings.agent_signing_key, settings.data_dir)))
    url = settings.agent_directory_url.rstrip("/") + DIRECTORY_PATH
    async with httpx.AsyncClient(timeout=5, follow_redirects=False) as client:
        response = await client.get(url)
    kids = [k.get("kid") for k in response.json().get("keys", [])] if response.status_code == 200 else []
    if keyid not in kids:
        raise SigningError(f"{url} does not serve our key {keyid} (HTTP {response.status_code})")
    return f"{url} serves our key {keyid}"


async def _redis(settings: Settings) -> str:
    if not settings.redis_url:
        raise RuntimeError("CANITBUY_REDIS_URL is not set")
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    from workers.arq_app import redis_unreachable

    client = Redis.from_url(settings.redis_url, socket_connect_timeout=CONNECT_SECONDS, socket_timeout=CONNECT_SECONDS)
    try:
        await client.ping()
        info = await client.info("server")
        return f"reached, Redis {info.get('redis_version', '?')}"
    except (RedisError, OSError) as error:
        raise Unreachable(str(redis_unreachable(settings.redis_url, error, CONNECT_SECONDS))) from None
    finally:
        await client.aclose()


async def _database(settings: Settings) -> str:
    from adapters.wiring import build_runtime

    def probe() -> str:
        problem = database_problem(settings.database_url) if settings.database_url else None
        if problem:
            raise Unreachable(problem)
        with build_runtime(settings) as runtime:
            return f"reached ({settings.backend}), log position {runtime.record.head_position()}"

    return await asyncio.to_thread(probe)


async def _chromium(settings: Settings) -> str:
    from adapters.browser.playwright_browser import PlaywrightBrowser

    browser = await PlaywrightBrowser(None, executable=settings.chromium_path).start()
    try:
        return f"launched {browser.version}"
    finally:
        await browser.stop()
