"""The ports the domain needs; adapters implement them.

Async ports are used from the agent's run loop; the event store itself is synchronous (eventsourcing) and is
reached from async code through a worker thread.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from domain.agent.actions import Action
from domain.agent.verdicts import CutShortCause, Verdict


class BlobStore(Protocol):
    """Content-addressed storage for screenshots, element lists, traces and videos."""

    def put(self, data: bytes) -> str:
        """Store the bytes (atomically, once) and return their sha256 hex digest."""
        ...

    def get(self, digest: str) -> bytes:
        """The bytes with that digest; raises KeyError when unknown."""
        ...

    def has(self, digest: str) -> bool: ...


class StepRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One step of a run as it is recorded (the body of a Run.StepRecorded event)."""

    number: int
    """1-based step number."""
    url: str
    """The page address when the step was observed."""
    title: str = ""
    screenshot: str | None = None
    """sha256 of the JPEG screenshot in the blob store."""
    elements: str | None = None
    """sha256 of the element list (JSON) in the blob store."""
    notes: str = ""
    """What the model (or built-in agent) said about its choice."""
    action: Action | None = None
    """The action chosen; null when the reply was not a valid action."""
    result: str = ""
    """What happened: ok, refused: <guard>, error: <message>, invalid reply: <message>; answered for a reader's
    step (its one call to the model); reply cut by our token limit: no action (a reader's: no answer) for the call
    our limit cut, recorded for its cost as the last step of a run cut short as our error."""
    duration_ms: int = 0
    """Wall time of the whole step."""
    model_ms: int = 0
    """Time spent waiting for the model."""
    tokens_in: int = 0
    tokens_out: int = 0
    """Completion tokens, reasoning included."""
    cost_usd: float = 0.0
    """Priced at the line-up's prices, or as the gateway reported it when it did."""
    tokens_reasoning: int = 0
    """Of tokens_out, those the model spent reasoning (0 when the provider does not say, and before #14)."""
    tokens_cached: int = 0
    """Of tokens_in, those read from the provider's cache."""
    exchange: str | None = None
    """sha256 of the model exchange (JSON) in the blob store: the exact prompt text and tool schema sent (the
    screenshot named by its own sha256), and the model's raw reply. Never the key. Null for built-in agents and
    for steps recorded before the exchange was published."""
    browser_retries: int = 0
    """Transient browser failures retried while observing this step (Chromium answering `Unable to capture
    screenshot` under load), at most two; 0 in steps recorded before retries were counted."""
    estimated: bool = False
    """The provider may have charged for the step's call, but it reported no usage we could read: an HTTP 200 reply
    that is no chat completion with a usage object (not JSON, say), or a call dropped when the run's time ran out
    while its request was on its way. tokens_in is then our estimate of the prompt we sent, tokens_out 0, and
    cost_usd that estimate at the line-up's prices (adapters/models/charges.py). False in steps recorded before
    the field (7 December 2026), when such calls were recorded with no tokens, at $0."""


class RunRecorder(Protocol):
    """Where a run's progress goes as it happens (the event store behind it)."""

    async def started(self, *, worker: str, browser_version: str, agent_version: str,
                      agent_release: int = 0) -> None: ...

    async def step_recorded(self, step: StepRecord) -> None: ...

    async def finished(self, verdict: Verdict, *, steps: int, seconds: float) -> None: ...

    async def cut_short(self, cause: CutShortCause, detail: str, *, steps: int, seconds: float) -> None: ...
