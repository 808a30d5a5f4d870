"""Runs in progress. The page polls a fragment through htmx; the fragment is cached per log position, so a
hundred readers polling every two seconds cost one render per new event.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.week.weeks import previous_week, week_of
from web.public.results import data_of
from web.rendering import Page, send
from web.site import Site

RECENT = 10
POLL = "every 2s"


def live_context(site: Site) -> dict[str, Any]:
    now = week_of(datetime.now(UTC))
    runs: list[dict[str, Any]] = []
    for week in (now, previous_week(now)):  # Monday repeats count for the week before
        runs += msgspec.json.decode(data_of(site).readmodels.runs_index(week=week))["runs"]
    active = sorted((r for r in runs if r["status"] in ("scheduled", "running")),
                    key=lambda r: (r["status"] != "running", r["scheduled_at"], r["model"], r["station"]))
    ended = sorted((r for r in runs if r["ended_at"]), key=lambda r: r["ended_at"], reverse=True)[:RECENT]
    return {"active": active, "running": sum(1 for r in active if r["status"] == "running"),
            "ended": ended, "week": now, "position": site.version, "poll": POLL}


async def live_page(request: Request) -> Response:
    site: Site = request.app.state.site
    key = ("live", site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(_render, site, "live.html"))
    return send(request, page, max_age=0)


async def live_rows(request: Request) -> Response:
    site: Site = request.app.state.site
    key = ("live-rows", site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(_render, site, "_live_rows.html"))
    return send(request, page, max_age=0)


def _render(site: Site, template: str) -> Page:
    return site.renderer.page(template, {"nav": "live", **live_context(site)})


routes = [Route("/live", live_page), Route("/live/rows", live_rows)]
