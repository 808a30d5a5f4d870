"""The week archive and the corrections log.

A week's page shows each publication: when, at which log position, the sha256 of its ranking, its Matrix and the
events they were computed from, the audit file to download and the command that verifies it against them; the
week's JSON (/api/weeks/W.json) lists the same values for `canitbuy audit verify --published`. The audit file
depends only on events up to the publication's position, which never change, so it is made once and kept.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.projections.logs import CorrectionsLog
from domain.week.anchors import week_publications
from domain.week.audit import export_lines, week_events
from domain.week.publications import standing
from domain.week.weeks import WeekError, parse_week
from web.data import SiteData
from web.errors import BadRequest, NotFound
from web.public.agent_page import use_of
from web.public.results import data_of, refused_by_the_gateway, unavailable_checks, unavailable_that_morning
from web.rendering import Page, send
from web.site import Site


def week_in_path(raw: str) -> str:
    """A week named in an address, or a 400 that says what is wrong with it."""
    try:
        return parse_week(raw)
    except WeekError as error:
        raise BadRequest(f"week: {error}") from None


def _public_week(data: SiteData, raw: str) -> str:
    """A week named in an address that has public results: a 400 when malformed, a 404 when unknown."""
    week = week_in_path(raw)
    if data.known(week) is None:
        raise NotFound(f"There are no public results for week {week}.")
    return week


async def weeks_page(request: Request) -> Response:
    site: Site = request.app.state.site
    data = data_of(site)

    def make() -> Page:
        return site.renderer.page("weeks.html", {"nav": "weeks", "weeks": data.weeks})

    return send(request, site.cache.get_or_make(("weeks", site.version), make), max_age=30)


async def week_page(request: Request) -> Response:
    site: Site = request.app.state.site
    data = data_of(site)
    week = _public_week(data, request.path_params["week"])

    def make() -> Page:
        publications = data.readmodels.publications(week)
        return site.renderer.page("week.html", {
            "nav": "weeks", "week": week, "info": data.known(week),
            "publications": list(enumerate(publications, start=1)),
            "agent_releases": use.for_week(week) if (use := use_of(site)) else [],
            "standing": standing(publications) + 1 if publications else None,
            "unavailable": unavailable_that_morning(site, week, set()),
            "unavailable_checks": unavailable_checks(site, week),
            "refused": refused_by_the_gateway(site, week, set()),
        })

    page = site.cache.get(("week", week, site.version)) or site.cache.put(
        ("week", week, site.version), await site.call(make))
    return send(request, page, max_age=30)


async def week_json(request: Request) -> Response:
    """The week's publications with their ranking, Matrix and events sha256 (docs/audit-format.md), the values
    `canitbuy audit verify --published` checks an audit file against."""
    site: Site = request.app.state.site
    data = data_of(site)
    week = _public_week(data, request.path_params["week"])

    def make() -> Page:
        body = week_publications(week, data.readmodels.publications(week))
        return Page(body, "application/json", {"Access-Control-Allow-Origin": "*"})

    key = ("week.json", week, site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(make))
    return send(request, page, max_age=30)


async def audit_file(request: Request) -> Response:
    site: Site = request.app.state.site
    data = data_of(site)
    week = week_in_path(request.path_params["week"])
    number = request.path_params["number"]
    publications = await site.call(data.readmodels.publications, week)
    if not 1 <= number <= len(publications):
        raise NotFound(f"Week {week} has {len(publications)} publication(s); there is no publication {number}.")
    publication = publications[number - 1]

    def make() -> Page:
        lines = export_lines(week_events(site.runtime.record.read_log, week, publication.position), publication)
        return Page(b"".join(line + b"\n" for line in lines), "application/jsonl")

    key = ("audit", week, number)  # not the position: two publications can stand at one (final after provisional)
    page = site.cache.get(key) or site.cache.put(key, await site.call(make))
    response = send(request, page, max_age=86400)
    response.headers["Content-Disposition"] = f'attachment; filename="canitbuy-{week}-publication-{number}.jsonl"'
    return response


async def corrections_page(request: Request) -> Response:
    site: Site = request.app.state.site
    data = data_of(site)

    def make() -> Page:
        log = msgspec.json.decode(data.readmodels.corrections(), type=CorrectionsLog)
        entries = list(reversed(log.corrections))
        return site.renderer.page("corrections.html", {"nav": "corrections", "entries": entries})

    key = ("corrections", site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(make))
    return send(request, page, max_age=30)


routes = [
    Route("/weeks", weeks_page),
    Route("/weeks/{week:str}", week_page),
    Route("/weeks/{week:str}/audit-{number:int}.jsonl", audit_file),
    Route("/api/weeks/{week:str}.json", week_json),
    Route("/corrections", corrections_page),
]
