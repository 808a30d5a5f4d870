"""Gateways the model tests share, each a real local HTTP server: the fake provider on the lab's loopback address
(for whole runs), one that gives every chat-completions call the same reply (a 401 as for a rejected key, a 200 in
plain text), and such a server named as the gateway in the environment, as `canitbuy models check` reads it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from lab.server import LabServer
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.openai_server import OpenAIServer

INVALID_KEY = {"error": {"message": "invalid API key"}}  # a gateway's 401 to a rejected key


@contextmanager
def provider_for(lab: LabServer) -> Iterator[tuple[OpenAIServer, str]]:
    """The fake provider, fetching the pages a model looks at from the lab's loopback address; with its base URL."""
    fake = OpenAIServer(lab.loopback_url("").rstrip("/"))
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


def answering_every_call(content: dict[str, Any], status: int = 200) -> Starlette:
    """A gateway that answers every chat-completions call with `content` and `status`, after reading the body."""

    async def answer(request: Request) -> JSONResponse:
        await request.body()
        return JSONResponse(content, status_code=status)

    return Starlette(routes=[Route("/v1/chat/completions", answer, methods=["POST"])])


@contextmanager
def gateway_named(monkeypatch: pytest.MonkeyPatch, app: Starlette, key: str) -> Iterator[str]:
    """`app` served while the block runs, named as the gateway (CANITBUY_MODEL_BASE_URL) with `key`."""
    with ThreadedApp(app) as running:
        monkeypatch.setenv("CANITBUY_MODEL_BASE_URL", f"{running.url}/v1")
        monkeypatch.setenv("AI_GATEWAY_API_KEY", key)
        yield f"{running.url}/v1"
