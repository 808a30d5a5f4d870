"""/api/weeks/{week}/spend.json: what the week's model runs have cost, what the rest is projected to cost, and the
weekly cap. A separate document, never part of a publication, so the ranking's and Matrix's bytes are untouched."""

from __future__ import annotations

import threading

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.models.lineup import estimated_run_usd, is_flagship
from domain.projections.spend import WeekSpend
from domain.week.weeks import WeekError, parse_week
from web.errors import BadRequest
from web.rendering import Page, send
from web.site import Site

_lock = threading.Lock()


def week_spend(site: Site, week: str) -> WeekSpend:
    """Fold the log on from where the site's fold stopped (synchronous: call it in a worker thread)."""
    with _lock:
        fold = site.spend
        while page := site.runtime.record.read_log(after=fold.position, limit=5000):
            fold.apply(page)
        return fold.week(week, cap_usd=site.settings.weekly_cap_usd, estimate=estimated_run_usd,
                         flagship=is_flagship, flagship_cap_usd=site.settings.flagship_cap_usd)


async def spend_json(request: Request) -> Response:
    site: Site = request.app.state.site
    try:
        week = parse_week(request.path_params["week"])
    except WeekError as error:
        raise BadRequest(f"week: {error}") from None
    key = ("spend.json", week, site.version)
    page = site.cache.get(key)
    if page is None:
        spend = await site.call(week_spend, site, week)
        page = site.cache.put(key, Page(msgspec.json.encode(spend), "application/json"))
    response = send(request, page, max_age=60)
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


routes = [Route("/api/weeks/{week:str}/spend.json", spend_json)]
