"""/agent: our agent as a published, versioned instrument. The current release in full (prompt, tool schema,
observation rule, limits, guards, the line-up with gateway model ids and prices), the earlier releases, and which
weeks' runs used which release (/api/agent.json carries the same).

`AgentUse` folds the log as the site follows it: the releases, and per week how many public runs started with
each release. Only new events are read at each move of the log.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.models.lineup import FLAGSHIP, WEEKLY
from adapters.models.release import current_agent
from domain.agent.agent_releases import AgentSpec
from domain.agent.lineup import Entrant
from domain.eventlog.record import Record
from web.rendering import Page, send
from web.site import Site

SKIM = frozenset({"Run.StepRecorded"})
BATCH = 5000
JSON = "application/json"


@dataclass
class ReleaseView:
    number: int
    sha256: str
    released_at: Any
    spec: AgentSpec


@dataclass
class AgentUse:
    record: Record
    position: int = 0
    releases: list[ReleaseView] = field(default_factory=list)
    weeks: dict[str, dict[int, int]] = field(default_factory=dict)
    """ISO week to {agent release number (0: none recorded): public runs started with it}."""
    _run_week: dict[str, str | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def listener(self, head: int) -> None:
        with self._lock:
            while self.position < head:
                batch = self.record.read_log(after=self.position, limit=BATCH, stop=head, skim=SKIM)
                if not batch:
                    break
                for envelope in batch:
                    self._apply(envelope.originator_id, envelope.name, envelope.payload)
                self.position = batch[-1].position

    def _apply(self, originator: str, name: str, p: Any) -> None:
        if name == "Run.Scheduled":
            self._run_week[originator] = p.week if p.org is None else None  # private tests are nobody's week
        elif name == "Run.Started":
            week = self._run_week.get(originator)
            if week is not None:
                used = self.weeks.setdefault(week, {})
                used[p.agent_release] = used.get(p.agent_release, 0) + 1
        elif name == "AgentReleases.Released":
            self.releases.append(ReleaseView(p.number, p.sha256, p.timestamp, p.spec))

    def for_week(self, week: str) -> list[tuple[int, int]]:
        """(release number, runs) of a week, in release order."""
        return sorted(self.weeks.get(week, {}).items())

    def weeks_of(self, number: int) -> list[str]:
        return sorted(w for w, used in self.weeks.items() if number in used)


async def start(site: Site) -> AgentUse:
    use = AgentUse(site.runtime.record)
    site.agent_use = use
    site.listeners.append(use.listener)
    await site.call(use.listener, await site.call(site.runtime.record.head_position))
    return use


def use_of(site: Site) -> AgentUse | None:
    return getattr(site, "agent_use", None)  # None before the lifespan started it


def _context(site: Site) -> dict[str, Any]:
    use = use_of(site)
    releases = list(use.releases) if use else []
    spec = current_agent()
    digest = spec.sha256()
    current = next((r for r in releases if r.sha256 == digest), None)
    return {
        "nav": "agent", "spec": spec, "sha256": digest, "current": current,
        "tool_schema": json.dumps(json.loads(spec.tool_schema), indent=2, sort_keys=True),
        "earlier": [r for r in reversed(releases) if r.sha256 != digest],
        "weeks_of": (lambda n: use.weeks_of(n)) if use else (lambda n: []),
        # The gateway ids and prices a run uses are these (adapters/models/lineup.py), whichever models a week
        # schedules from the staff's line-up.
        "entrants": [*WEEKLY, *FLAGSHIP],
        "token_limits": token_limits([*WEEKLY, *FLAGSHIP]),
    }


def token_limits(entrants: list[Entrant]) -> str:
    """The completion-token limits the line-up's requests send (each model its own; request_payload), in words.
    The release's limits.max_tokens is not one of them: it stays in the release as recorded, so that the releases'
    content and sha256 do not change."""
    limits = sorted({e.max_tokens for e in entrants})
    if not limits:
        return "none yet"
    return str(limits[0]) if len(limits) == 1 else f"{limits[0]} to {limits[-1]}"


def _json(site: Site) -> bytes:
    context = _context(site)
    use = use_of(site)

    def release(r: ReleaseView) -> dict[str, Any]:
        return {"number": r.number, "sha256": r.sha256, "released_at": r.released_at,
                "spec": msgspec.to_builtins(r.spec), "weeks": context["weeks_of"](r.number)}

    body = {
        "current": {"number": context["current"].number if context["current"] else None,
                    "sha256": context["sha256"], "spec": msgspec.to_builtins(context["spec"])},
        "releases": [release(r) for r in (use.releases if use else [])],
        "weeks": {w: {str(n): runs for n, runs in used} for w, used in
                  ((w, use.for_week(w)) for w in sorted(use.weeks))} if use else {},
        "lineup": [msgspec.to_builtins(e) for e in context["entrants"]],
    }
    return msgspec.json.encode(body)


async def agent_page(request: Request) -> Response:
    site: Site = request.app.state.site
    key = ("agent", site.version)
    page = site.cache.get(key)
    if page is None:
        context = await site.call(_context, site)
        page = site.cache.put(key, await site.call(site.renderer.page, "agent.html", context))
    return send(request, page, max_age=60)


async def agent_json(request: Request) -> Response:
    site: Site = request.app.state.site
    key = ("agent.json", site.version)
    page = site.cache.get(key) or site.cache.put(key, Page(await site.call(_json, site), JSON))
    return send(request, page, max_age=60)


routes = [
    Route("/agent", agent_page),
    Route("/api/agent.json", agent_json),
]
