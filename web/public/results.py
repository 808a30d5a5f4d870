"""The ranking and the Matrix of a week: rendered once per log position, then served as bytes with an ETag.

`start` builds the read models in the lifespan and returns the listener that keeps them caught up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.courses.course import CURRENT_VERSION, load_course
from domain.projections.charts import ranking_chart
from domain.projections.repeats import Repeats
from domain.week.publishing import UnknownWeekError
from domain.week.weeks import week_of
from web.data import SiteData
from web.public.attempts_views import matrix_attempts
from web.public.charts import chart_view
from web.public.manual_tests import ManualTests, manual_of, row_view
from web.public.repeats_views import has_repeats, repeats_models, repeats_pairs, with_repeat_cells
from web.public.week_views import matrix_rows, ranking_rows, rate_view, stage_groups, with_attempt_marks
from web.rendering import Page, send
from web.site import Site


async def start(site: Site) -> list[Callable[[int], Any]]:
    await site.call(site.runtime.readmodels.migrate)
    data = SiteData(site.runtime.readmodels)
    manual = ManualTests(site.runtime.record)
    site.data, site.manual = data, manual
    return [data.listener, manual.listener]


def data_of(site: Site) -> SiteData:
    return site.data


async def week_page(request: Request, kind: str) -> Response:
    site: Site = request.app.state.site
    data = data_of(site)
    # Parsing an empty query string still costs a few microseconds: the hot path skips it.
    week = data.pick_week(request.query_params.get("week") if request.scope["query_string"] else None)
    version = site.version
    key = (kind, week, version)
    page = site.cache.get(key)
    if page is None:
        page = site.cache.put(key, await site.call(render_week, site, kind, week))
    # The page is a function of the path, the query and the log position alone: the next request for them is
    # answered before the router (web/front_pages.py).
    site.front.remember(request.scope, page, version, max_age=30)
    return send(request, page, max_age=30)


def render_week(site: Site, kind: str, week: str | None, extra: dict[str, Any] | None = None) -> Page:
    """The page; `extra` adds to its context (the staff desk's view of it: never cached as the public page)."""
    data = data_of(site)
    context: dict[str, Any] = {"nav": kind, "week": week, "weeks": data.weeks, **(extra or {})}
    if week is None:
        context["counted"] = len(load_course(CURRENT_VERSION).obstacle_codes)
        return site.renderer.page(f"{kind}.html", context)
    docs = data.documents(week)
    context.update(view=docs.view, ranking=docs.ranking, matrix=docs.matrix, standing=docs.standing,
                   publications=docs.publications, info=data.known(week))
    # The obstacle stations that count in the week (less those a correction left out), the N of each "x of N".
    context["counted"] = len(docs.ranking.stations)
    repeats = repeats_of(data, week)
    context["repeats"] = repeats
    shown = {r.model for r in docs.matrix.models}
    context["unavailable"] = unavailable_that_morning(site, week, shown)
    context["unavailable_checks"] = unavailable_checks(site, week)
    context["refused"] = refused_by_the_gateway(site, week, shown)
    if kind == "ranking":
        context["ranked"], context["unranked"] = ranking_rows(docs.ranking)
        context["ranking_chart"] = chart_view("ranking", ranking_chart(docs.ranking),
                                              f"/api/charts/ranking.json?week={week}")
        context["published_rows"] = (
            ranking_rows(docs.published_ranking)
            if docs.view.changed_since_publication and docs.published_ranking is not None else None
        )
        if repeats is not None:
            context["repeat_models"] = repeats_models(repeats)
            context["repeat_pairs"] = repeats_pairs(repeats)
    else:
        stations = docs.matrix.stations  # in the stage order the document carries
        codes = [s.code for s in stations]
        context["groups"] = stage_groups(docs.matrix)
        context["rows"] = matrix_rows(docs.matrix)
        context["columns"] = stations
        if repeats is not None:
            context["rows"] = with_repeat_cells(context["rows"], codes, repeats)
        marks = matrix_attempts(data, week, docs.matrix)
        context["rows"] = with_attempt_marks(context["rows"], codes, marks)
        context["reruns"] = len(marks)
        context["rates"] = [rate_view(s) for s in stations]
        context["tested"] = [row_view(r, codes) for r in manual_of(site).rows_of_week(week, docs.course)]
    return site.renderer.page(f"{kind}.html", context)


def unavailable_that_morning(site: Site, week: str, shown: set[str]) -> list[str]:
    """The labels of the line-up models the week's checks could not reach through the gateway, and that have no
    runs to show: not run that week (or not yet, before the afternoon's check), so neither ranked nor failing at
    every station. Read inside the render, once per log position (a check is an event: recording it moves the
    position)."""
    lineup = site.runtime.record.lineup()
    ours = set(lineup.refused(week))
    return [lineup.entrants[m].label if m in lineup.entrants else m
            for m in lineup.unavailable(week) if m not in shown and m not in ours]


def refused_by_the_gateway(site: Site, week: str, shown: set[str]) -> list[str]:
    """The labels of the line-up models not run because the gateway refused our request at the week's check (our
    key, credits or route): our configuration's doing, so the pages say so, never that the model could not be
    reached. Like the unavailable ones, they have no runs to show."""
    lineup = site.runtime.record.lineup()
    return [lineup.entrants[m].label if m in lineup.entrants else m for m in lineup.refused(week) if m not in shown]


def unavailable_checks(site: Site, week: str) -> str:
    """Which checks the unavailable models were not reached at: "both" (Monday 06:00 and 14:00 UTC), "morning"
    while the week is in progress and its second check not yet made, "first" for a week that ended with one check
    (the schedule before there was a second, when a reply without an action also counted as unavailable; or no
    gateway key at 14:00)."""
    if site.runtime.record.lineup().checked(week, 2):
        return "both"
    return "morning" if week == week_of(site.runtime.record.clock()) else "first"


def repeats_of(data: SiteData, week: str) -> Repeats | None:
    """The week's repeat-run document when some cell has more than one repeat; None otherwise (the pages then
    show nothing of it). Read inside render_week, so once per read-model position like the page itself."""
    try:
        repeats = msgspec.json.decode(data.readmodels.repeats_bytes(week), type=Repeats)
    except UnknownWeekError:
        return None
    return repeats if has_repeats(repeats) else None


async def ranking(request: Request) -> Response:
    return await week_page(request, "ranking")


async def matrix(request: Request) -> Response:
    return await week_page(request, "matrix")


routes = [Route("/ranking", ranking), Route("/matrix", matrix)]
