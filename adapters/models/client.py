"""HttpxModelClient: an OpenAI-compatible chat-completions client with time-outs and polite retries.

429 and 5xx answers and broken connections are retried with back-off (Retry-After honoured up to a bound);
when every attempt fails the model cannot be reached, and the run is cut short (not a result). Any other 4xx is
the gateway refusing our request (our key, credits or route: `GatewayRefusalError`), our error, not retried.
A caller may pass a `CallState` to see, while the call is in flight, whether it has met a failure yet: the run's
clock can run out mid-call, and then that decides whose time it was (see `domain.agent.agent_ports.ModelLink`). The
client is shared by a process's runs, so the state is the caller's, one per call.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import httpx

from adapters.models.throttle import ProviderGate
from domain.agent.agent_ports import GatewayRefusalError, ModelConnectionError

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}


@dataclass
class CallState:
    """What one call has met so far; readable while the call is in flight, or after it was cancelled."""

    failures: int = 0
    """Attempts that failed: a transport error (refused, reset, connect or read time-out) or a retried status."""
    problem: str = ""
    """The newest failure, in a few words."""
    waited: float = 0.0
    """Seconds the call has waited, over all its attempts, for a free place under our own limit on calls at once to
    the provider (CANITBUY_PROVIDER_CONCURRENCY): our throttling, neither the model's time nor the connection's."""
    queued_at: float | None = None
    """When the wait for a free place in progress began (time.monotonic()); None when the call is not waiting."""
    sending: bool = False
    """An attempt's request is on its way to the provider, its answer not read yet: a call cancelled then (the
    run's time ran out) may be charged for, where one cancelled while it waited for a place or between attempts
    was not sent."""

    def failed(self, problem: str) -> None:
        self.failures, self.problem = self.failures + 1, problem

    def queued(self, waiting: bool) -> None:
        """The gate's word that the call has begun (True) or ended (False) waiting for a free place."""
        now = time.monotonic()
        if waiting:
            self.queued_at = now
        elif self.queued_at is not None:
            self.waited, self.queued_at = self.waited + now - self.queued_at, None

    def our_wait(self) -> float:
        """Seconds waited for a free place so far, the wait in progress included."""
        return self.waited + (time.monotonic() - self.queued_at if self.queued_at is not None else 0.0)


@dataclass(frozen=True)
class ChatReply:
    body: dict[str, Any]
    ms: int
    """How long the call took, retries and pauses after a 429 included, less its waits for a free place under our
    own limit on calls at once (CallState.waited)."""
    attempts: int


def retry_after_seconds(header: str | None) -> float | None:
    """The seconds a Retry-After header asks for, when it is a whole number in ASCII digits; None otherwise (an
    HTTP date, words, or digits such as '²' that str.isdigit() takes and float() does not)."""
    text = (header or "").strip()
    return float(text) if text.isascii() and text.isdigit() else None


class HttpxModelClient:
    def __init__(self, base_url: str, api_key: str | None, *, timeout: float = 60.0, attempts: int = 4,
                 backoff: float = 1.0, max_retry_after: float = 20.0, gate: ProviderGate | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/") + "/", headers=headers,
                                       timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))
        self._attempts, self._backoff, self._max_retry_after = attempts, backoff, max_retry_after
        self.gate = gate if gate is not None else ProviderGate()
        """Per-provider places and pauses (shared through Redis by the workers when there are several)."""

    async def complete(self, payload: dict[str, Any], state: CallState | None = None) -> ChatReply:
        started, problem = time.monotonic(), ""
        state = state if state is not None else CallState()
        route = str(payload.get("model", ""))
        for attempt in range(1, self._attempts + 1):
            try:
                async with self.gate.slot(route, on_pause=state.failed, on_queue=state.queued):
                    state.sending = True  # left so when the call is cancelled before its answer is read
                    response = await self._http.post("chat/completions", json=payload)
                    state.sending = False
            except httpx.TransportError as error:
                state.sending = False
                problem = f"{type(error).__name__}: {error}".rstrip(": ")
                state.failed(problem)
                await self._pause(attempt, None)
                continue
            if response.status_code in RETRY_STATUSES:
                problem = f"HTTP {response.status_code}"
                state.failed(problem)
                retry_after = retry_after_seconds(response.headers.get("retry-after"))
                if response.status_code == 429 and retry_after is not None:
                    # The provider is saturated: every call to it waits, not only this one.
                    await self.gate.saturated(route, retry_after)
                await self._pause(attempt, retry_after)
                continue
            if 400 <= response.status_code < 500:
                # A 4xx that is not retried (a bad key, no credits, a wrong route): our configuration's error.
                raise GatewayRefusalError(response.status_code)
            if response.status_code >= 500:
                raise ModelConnectionError(f"the model endpoint refused the request: HTTP {response.status_code}")
            try:
                body = response.json()
            except ValueError:
                body = {"unparsed": response.text[:20000]}
            # The call's time, less its waits for a free place under our own limit (ours, not the model's).
            took = time.monotonic() - started - state.waited
            return ChatReply(body=body, ms=int(took * 1000), attempts=attempt)
        raise ModelConnectionError(f"no answer from the model after {self._attempts} attempts ({problem})")

    async def _pause(self, attempt: int, retry_after: float | None) -> None:
        if attempt >= self._attempts:
            return
        delay = self._backoff * 2 ** (attempt - 1)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self._max_retry_after))
        await asyncio.sleep(delay)

    async def aclose(self) -> None:
        await self._http.aclose()
        await self.gate.aclose()
