"""Which agent a run's model name stands for: a built-in agent (no model) or a model behind the gateway.

One model client is shared by the process's runs (its connection pool), made on first need: a worker running
only built-in agents needs no key and opens no connection to the gateway.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapters.botauth import BotAuthSigner
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import BASELINES, entrant
from adapters.models.throttle import ProviderGate, RedisPauses
from adapters.reader import build_reader
from adapters.settings import Settings
from domain.agent.agent_ports import Agent, Reader
from domain.agent.lineup import Entrant
from domain.agent.ports import BlobStore


class UnknownModelError(LookupError):
    def __str__(self) -> str:
        return f"no built-in agent or line-up model named {self.args[0]!r}"


def is_known(model: str) -> bool:
    return model in BASELINES or entrant(model) is not None


@dataclass
class AgentFactory:
    settings: Settings
    blobs: BlobStore
    signer: BotAuthSigner | None = None
    think_seconds: float | None = None
    """Built-in agents' pause per step; None keeps their default (benchmarks set 0 to measure the harness)."""
    _client: HttpxModelClient | None = field(default=None, init=False)

    def _entrant(self, model: str) -> Entrant:
        found = entrant(model)
        if found is None:
            raise UnknownModelError(model)
        return found

    def _model_client(self) -> HttpxModelClient:
        if self._client is None:
            self._client = HttpxModelClient(self.settings.model_base_url, self.settings.model_api_key,
                                            gate=provider_gate(self.settings))
        return self._client

    def agent(self, model: str) -> Agent:
        if model in BASELINES:
            from adapters.agents.rule_agent import builtin_agent

            if self.think_seconds is None:
                return builtin_agent(model)
            return builtin_agent(model, think_seconds=self.think_seconds)
        from adapters.models.agent import ModelAgent

        return ModelAgent(self._model_client(), self._entrant(model), self.blobs)

    def reader(self, model: str, store_url: str) -> Reader:
        return build_reader(model, store_url, settings=self.settings, blobs=self.blobs,
                            client=None if model in BASELINES else self._model_client(),
                            entrant=None if model in BASELINES else self._entrant(model))

    def version(self, model: str) -> str:
        if model in BASELINES:
            return f"{model}/builtin"
        return self._entrant(model).route

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def provider_gate(settings: Settings) -> ProviderGate:
    """Per-provider places in this process; the pause after a 429 shared through Redis when workers are several."""
    pauses = None
    if settings.redis_url:
        import redis.asyncio

        pauses = RedisPauses(redis.asyncio.from_url(settings.redis_url))  # type: ignore[no-untyped-call]
    return ProviderGate(pauses, settings.provider_concurrency)


def default_models(settings: Settings, lineup: list[Any]) -> list[str]:
    """The week's line-up: the weekly models when a gateway key is configured, else the built-in agents."""
    if not settings.model_api_key:
        return list(BASELINES)
    return [e.model for e in lineup] or [e.model for e in _weekly()]


def _weekly() -> tuple[Entrant, ...]:
    from adapters.models.lineup import WEEKLY

    return WEEKLY
