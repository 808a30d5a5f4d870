"""Fakes of the ports for the run loop's unit tests: in-memory blobs and recorder, scripted pages and agents."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from domain.agent.actions import Action
from domain.agent.agent_ports import Decision, Task
from domain.agent.observation import Observation, PageProbe
from domain.agent.ports import StepRecord
from domain.agent.verdicts import CutShortCause, Verdict


class MemoryBlobs:
    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        self.data[digest] = data
        return digest

    def get(self, digest: str) -> bytes:
        return self.data[digest]

    def has(self, digest: str) -> bool:
        return digest in self.data


@dataclass
class ListRecorder:
    steps: list[StepRecord] = field(default_factory=list)
    verdict: Verdict | None = None
    cut: tuple[CutShortCause, str] | None = None

    async def started(self, *, worker: str, browser_version: str, agent_version: str,
                      agent_release: int = 0) -> None:
        pass

    async def step_recorded(self, step: StepRecord) -> None:
        self.steps.append(step)

    async def finished(self, verdict: Verdict, *, steps: int, seconds: float) -> None:
        self.verdict = verdict

    async def cut_short(self, cause: CutShortCause, detail: str, *, steps: int, seconds: float) -> None:
        self.cut = (cause, detail)


@dataclass
class ScriptedSession:
    """Pages in order: each action moves to the next page; the probe tells what the judge would read."""

    pages: list[tuple[Observation, PageProbe]]
    acted: list[Action] = field(default_factory=list)
    at: int = 0

    async def open(self, url: str) -> None:
        self.at = 0

    async def observe(self) -> Observation:
        return self.pages[self.at][0]

    async def probe(self) -> PageProbe:
        return self.pages[self.at][1]

    async def act(self, action: Action, observation: Observation) -> str:
        self.acted.append(action)
        self.at = min(self.at + 1, len(self.pages) - 1)
        return "ok"

    async def close(self) -> None:
        pass


@dataclass
class ScriptedAgent:
    decisions: list[Decision | Exception]
    name: str = "scripted"
    version: str = "1"
    calls: int = 0

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision:
        decision = self.decisions[min(self.calls, len(self.decisions) - 1)]
        self.calls += 1
        if isinstance(decision, Exception):
            raise decision
        return decision


class TickingClock:
    """Each reading advances by `tick` seconds: time passes only when the loop looks at it."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now = 0.0
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now
