"""A model provider's Retry-After in digits that are not ASCII ('²' as latin-1 or UTF-8 bytes, '٣', '①') is no
number of seconds: the client retries on its own back-off and pauses no provider, exactly as for "soon", instead of
raising out of the call (float('²') raises) or waiting what float('٣') reads. The provider is a real HTTP server
(uvicorn on a free port) that answers 429 with the header's bytes as given, then a reply."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from adapters.models.client import HttpxModelClient
from adapters.models.throttle import MemoryPauses, ProviderGate
from tests.integration.agent.conftest import ThreadedApp

pytestmark = pytest.mark.anyio

RETRY_AFTER = {
    "ascii": b"1",
    "words": b"soon",
    "superscript-latin-1": "²".encode("latin-1"),
    "superscript-utf-8": "²".encode(),
    "arabic-indic-three": "٣".encode(),
    "circled-one": "①".encode(),
    "one-superscript-two": "1²".encode(),
}
"""The Retry-After bytes each model's first answer carries, by the model's name."""


class SaturatedOnce:
    """Answers each model's first call 429 with its Retry-After bytes, and every later call with a reply."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])])

    async def complete(self, request: Request) -> JSONResponse:
        model = str((await request.json())["model"])
        self.calls[model] += 1
        if self.calls[model] == 1:
            response = JSONResponse({"error": {"message": "rate limited"}}, status_code=429)
            response.raw_headers.append((b"retry-after", RETRY_AFTER[model.rpartition("/")[2]]))
            return response
        return JSONResponse({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[SaturatedOnce, str]]:
    fake = SaturatedOnce()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


async def call(base: str, name: str) -> tuple[int, float, float]:
    """(attempts, seconds the call took, seconds the provider stays paused after it)."""
    pauses = MemoryPauses()
    client = HttpxModelClient(base, "sk-test", timeout=5.0, attempts=3, backoff=0.05, gate=ProviderGate(pauses))
    try:
        began = time.monotonic()
        reply = await client.complete({"model": f"acme/{name}", "messages": []})
        return reply.attempts, time.monotonic() - began, await pauses.remaining("acme")
    finally:
        await client.aclose()


async def test_a_retry_after_in_ascii_digits_is_still_honoured(provider: tuple[SaturatedOnce, str]) -> None:
    _, base = provider
    attempts, took, _ = await call(base, "ascii")
    assert attempts == 2 and took >= 1.0


@pytest.mark.parametrize("name", [n for n in RETRY_AFTER if n != "ascii"])
async def test_a_retry_after_in_other_digits_is_ignored_like_one_in_words(
        provider: tuple[SaturatedOnce, str], name: str) -> None:
    fake, base = provider
    attempts, took, paused = await call(base, name)
    assert attempts == 2 and fake.calls[f"acme/{name}"] == 2
    assert took < 0.9 and paused == 0.0  # the back-off of 0.05 s only; no provider pause
