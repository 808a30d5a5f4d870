"""Per-provider limits on model calls, against a real local server and the real Redis: a 429 with Retry-After
from the gateway pauses every worker's calls to that provider (shared through Redis), and each process makes at
most the configured number of calls at once to one provider."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import anyio
import pytest
import redis.asyncio

from adapters.models.client import CallState, HttpxModelClient
from adapters.models.throttle import ProviderGate, RedisPauses, parse_limits
from adapters.settings import Settings, SettingsError
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer

pytestmark = [pytest.mark.anyio, pytest.mark.redis]
REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


def worker(base: str, prefix: str, **limits: int) -> HttpxModelClient:
    """One worker process's client: its own connection pool and places, the pauses in the shared Redis."""
    gate = ProviderGate(RedisPauses(redis.asyncio.from_url(REDIS), prefix=prefix), limits)
    return HttpxModelClient(base, "sk-test", timeout=5, attempts=3, backoff=0.05, gate=gate)


async def test_a_429_with_retry_after_slows_every_worker_for_that_provider_not_others(
        server: tuple[OpenAIServer, str]) -> None:
    fake, base = server
    prefix = f"canitbuy-test:{uuid.uuid4().hex}:"
    first, second = worker(base, prefix), worker(base, prefix)
    waited = CallState()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(first.complete, {"model": "acme/model-flaky", "messages": []})
            await anyio.sleep(0.3)  # the 429 (Retry-After: 1) has reached the first worker by now
            began = time.monotonic()
            await second.complete({"model": "acme/other", "messages": []}, waited)
            same_provider = time.monotonic() - began
            began = time.monotonic()
            await second.complete({"model": "zenith/model", "messages": []})
            other_provider = time.monotonic() - began
    finally:
        await first.aclose()
        await second.aclose()
    limited = next(t for route, t in fake.arrived if route == "acme/model-flaky")
    waiting = next(t for route, t in fake.arrived if route == "acme/other")
    assert waiting - limited >= 0.9 and same_provider >= 0.6  # it waited out the other worker's pause
    assert other_provider < 0.5  # another provider is not paused
    assert waited.failures == 1 and "acme paused after HTTP 429" in waited.problem  # the time was the connection's


async def test_each_process_makes_at_most_the_providers_number_of_calls_at_once(
        server: tuple[OpenAIServer, str]) -> None:
    fake, base = server
    client = worker(base, f"canitbuy-test:{uuid.uuid4().hex}:", acme=1)
    began = time.monotonic()
    try:
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(client.complete, {"model": "acme/model-sluggish", "messages": []})
    finally:
        await client.aclose()
    assert fake.most_in_flight == 1 and time.monotonic() - began >= 2.1  # 3 calls of 0.7 s, one at a time


def test_the_limits_are_a_setting() -> None:
    assert parse_limits("anthropic=2, *=4") == {"anthropic": 2, "*": 4}
    assert Settings.from_env({"CANITBUY_PROVIDER_CONCURRENCY": "openai=8"}).provider_concurrency == {"openai": 8}
    with pytest.raises(SettingsError, match="CANITBUY_PROVIDER_CONCURRENCY: not provider=N: 'openai'"):
        Settings.from_env({"CANITBUY_PROVIDER_CONCURRENCY": "openai"})
