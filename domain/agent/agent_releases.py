"""Agent releases: the agent is a published, versioned instrument, like the course.

A release fixes everything that decides what the agent sees and may do: the system prompt, the tool schema, the
observation rule (and the sha256 of the script that applies it), the limits and the guards' version. A release
never changes: a changed prompt (or anything else in it) is a new release, numbered on. Every run records the
release it ran with (Run.Started.agent_release).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from uuid import NAMESPACE_URL, uuid5

import msgspec
from eventsourcing.domain import Aggregate

AGENT_RELEASES_ID = uuid5(NAMESPACE_URL, "canitbuy:agent-releases")


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """The bounds of one run and of one step."""

    max_steps: int
    """Steps a run may take before it ends as step_limit."""
    max_seconds: float
    """Wall time a run may take."""
    history_steps: int
    """How many of its own earlier steps the model is shown each step (newest last)."""
    max_elements: int
    """Elements listed at most per step, in page order."""
    max_tokens: int
    """A figure recorded with the release, not the limit requests send: each line-up model has its own limit (the
    line-up's max_tokens), which each request sends and each step's recorded request shows. Kept as recorded so that
    a release's content and sha256 never change."""
    temperature: float
    viewport: str
    """Browser viewport in CSS pixels, e.g. 1280x800; the screenshot is of the viewport."""
    screenshot: str
    """Screenshot format, e.g. JPEG quality 60."""


class AgentSpec(msgspec.Struct, frozen=True, kw_only=True):
    """The content of an agent release, in full."""

    system_prompt: str
    """The system prompt, exactly as sent."""
    user_prompt: str
    """How each step's user message is built (its headings, in order)."""
    tool_schema: str
    """The `act` tool's schema, canonical JSON (sorted keys), exactly as sent."""
    tool_schema_sha256: str
    observation_rule: str
    """Which elements of the page are listed for the agent, in words."""
    observe_sha256: str
    """sha256 of the script that reads the page (adapters/browser/observe.js)."""
    limits: Limits
    guards: str
    """What the guards refuse, in words."""
    guards_sha256: str
    """sha256 of the guards' code (domain/agent/guards.py): their version."""

    def sha256(self) -> str:
        """The release's identity: the same content is the same release."""
        return hashlib.sha256(msgspec.json.encode(self, order="sorted")).hexdigest()


class AgentReleaseError(Exception):
    pass


class AgentReleases(Aggregate):
    class Opened(Aggregate.Created):
        """The log of agent releases was opened."""

    class Released(Aggregate.Event):
        """An agent release came into force: runs started from now on record its number."""

        number: int
        """1, 2, 3, ... in order of release."""
        sha256: str
        """sha256 of the spec (canonical JSON, sorted keys)."""
        spec: AgentSpec
        """The release in full."""

    def __init__(self) -> None:
        self.releases: list[AgentReleases.Released] = []

    @classmethod
    def open(cls, *, at: datetime) -> AgentReleases:
        return cls._create(cls.Opened, id=AGENT_RELEASES_ID, timestamp=at)

    def number_of(self, sha256: str) -> int | None:
        return next((r.number for r in self.releases if r.sha256 == sha256), None)

    def release(self, spec: AgentSpec, *, at: datetime) -> int:
        """The release number of this content: the one already released, or a new one."""
        digest = spec.sha256()
        found = self.number_of(digest)
        if found is not None:
            return found
        number = len(self.releases) + 1
        self.trigger_event(self.Released, timestamp=at, number=number, sha256=digest, spec=spec)
        return number


def _apply_released(self: AgentReleases.Released, aggregate: AgentReleases) -> None:
    aggregate.releases.append(self)


AgentReleases.Released.apply = _apply_released  # type: ignore[method-assign,assignment]
