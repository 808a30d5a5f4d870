"""The front page: what CanItBuy is, and the latest results."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.courses.course import CURRENT_VERSION, load_course
from web.public import archive
from web.public.results import data_of
from web.public.week_views import ranking_rows
from web.rendering import Page, send
from web.site import Site


def render_front(site: Site) -> Page:
    data = data_of(site)
    week = data.default_week()
    context: dict[str, Any] = {"nav": "", "course": load_course(CURRENT_VERSION), "week": week, "ranked": [],
                               "unranked": [], "info": data.known(week) if week else None}
    if week is not None:
        docs = data.documents(week)
        context["ranked"], context["unranked"] = ranking_rows(docs.ranking)
        context["counted"] = len(docs.ranking.stations)  # the N of each "x of N"
        context["changed"] = docs.view.changed_since_publication
    return site.renderer.page("index.html", context)


async def front_page(request: Request) -> Response:
    site: Site = request.app.state.site
    key = ("front", site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(render_front, site))
    return send(request, page, max_age=30)


routes = [Route("/", front_page), *archive.routes]
