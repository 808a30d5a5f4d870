"""The charts page, each chart's data at /api/charts/*.json (CC BY 4.0), and the charts other pages show.

The numbers come from the weeks' documents (domain/charts.py); the pictures are drawn on the server once per set
of numbers (web/public/chart_svg.py) and the pages holding them are cached per read-model version like the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from markupsafe import Markup
from msgspec import UNSET, UnsetType
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.courses.course import CURRENT_VERSION, UnknownStationError, load_course
from domain.projections.charts import (
    CostChart,
    RankingChart,
    RunCost,
    StationChart,
    StopsChart,
    WeeksChart,
    cost_chart,
    ranking_chart,
    station_chart,
    stops_chart,
    weeks_chart,
)
from web.data import SiteData
from web.errors import NotFound
from web.public.spend import week_spend
from web.rendering import Page, send
from web.site import Site


def data_of(site: Site) -> SiteData:
    return site.data

WEEKLY = ("ranking", "weeks", "stops", "cost")
"""The charts of /charts, each with its data at /api/charts/{name}.json?week=."""


class ChartView(msgspec.Struct, frozen=True, kw_only=True):
    """A chart as a page shows it: the picture, what it says in words, its table's numbers and their address."""

    kind: str
    title: str
    description: str
    svg: str
    json_url: str
    data: Any


def describe_ranking(data: RankingChart) -> str:
    if not data.rows:
        return "No model is ranked this week."
    top = [r for r in data.rows if r.place == 1]
    names = " and ".join(r.label for r in top)
    lead = f"{names} {'share' if len(top) > 1 else 'leads with'} first place at {top[0].percents().share}%"
    rivals = [r.label for r in data.rows if r.place != 1 and r.high >= top[0].low]
    overlap = (f"; the intervals of {', '.join(rivals)} overlap the leader's, so the lead is not certain"
               if rivals else "; no other interval reaches the leader's")
    return f"Share of obstacle stations passed in week {data.week}, each with its Wilson 95% interval. {lead}{overlap}."


def describe_weeks(data: WeeksChart) -> str:
    changes = "; ".join(f"course {c.course_version} from {c.week}" for c in data.course_changes) or "no course change"
    unranked = "; ".join(f"{s.label} in {', '.join(p.week for p in s.points if not p.ranked)}"
                         for s in data.series if any(not p.ranked for p in s.points))
    left_out = (f" Not drawn, because an unranked week's share is no score: {unranked}; the table lists them."
                if unranked else "")
    return (f"Each model's share passed per week it was ranked, from {data.weeks[0] if data.weeks else '–'} to "
            f"{data.weeks[-1] if data.weeks else '–'}, with 95% intervals; {changes}.{left_out}")


def describe_stops(data: StopsChart) -> str:
    hardest = sorted((s for s in data.stations if s.results and not s.excluded), key=lambda s: s.passed / s.results)
    few = ", ".join(f"{s.code.upper()} {s.name} ({s.passed} of {s.results})" for s in hardest[:3])
    return (f"How many models passed each station in week {data.week}, in the course's stage order, counted as "
            f"the score counts: at S01 all {data.models} models, at the other stations the {data.counted} that "
            f"passed S01 (a model excluded by a correction counts nowhere). Fewest passed: {few or 'none'}.")


def describe_stages(data: StopsChart) -> str:
    return (f"Share of counted results passed in each stage, per week, over {len(data.over_weeks)} week(s): beyond "
            f"the control, only the results of models that passed S01 that week.")


def describe_cost(data: CostChart) -> str:
    if not data.rows:
        return f"No model run of week {data.week} has a recorded cost yet.{_checks_cost(data)}"
    cheapest = min(data.rows, key=lambda r: r.cost_per_run_usd)
    best = max(data.rows, key=lambda r: r.share)
    return (f"Cost per run against share passed in week {data.week}. Cheapest per run: {cheapest.label} at "
            f"${cheapest.cost_per_run_usd:.4f}; highest share: {best.label} at {best.percent()}%.{_checks_cost(data)}")


def _checks_cost(data: CostChart) -> str:
    if isinstance(data.checks_usd, UnsetType):
        return ""
    return (f" Besides the runs, the week's model checks (one call a model before the line-up) cost "
            f"${data.checks_usd:.4f}, counted in the week's spend, not per run.")


def describe_station(data: StationChart) -> str:
    rates = ", ".join(f"{w.week}: {w.passed} of {w.results}"
                      + (f" ({', '.join(w.not_counted)} not counted)" if w.not_counted else "") for w in data.weeks)
    counted = ("every model's result" if data.station == load_course(CURRENT_VERSION).control.code else
               "the results of the models that passed S01 that week")
    return (f"What each model's counted run did on {data.station.upper()} {data.name} per week; the rate counts "
            f"{counted}, less models excluded by a correction; passed: {rates or 'none'}.")


def _other_weeks(data: SiteData) -> list[str]:
    return [w.week for w in data.weeks]


def chart_data(site: Site, kind: str, week: str) -> msgspec.Struct:
    """One weekly chart's numbers (synchronous: call it in a worker thread)."""
    data = data_of(site)
    docs = data.documents(week)
    if kind == "ranking":
        return ranking_chart(docs.ranking)
    if kind == "weeks":
        return weeks_chart([data.documents(w).ranking for w in _other_weeks(data)])
    if kind == "stops":
        return stops_chart(docs.matrix, [data.documents(w).matrix for w in _other_weeks(data) if w != week])
    if kind == "cost":
        spend = week_spend(site, week)
        checked = [c for c in (spend.checks_usd, spend.flagship_checks_usd) if not isinstance(c, UnsetType)]
        return cost_chart(docs.ranking, [RunCost(model=m.model, runs_ended=m.runs_ended, actual_usd=m.actual_usd)
                                         for m in spend.models],
                          round(sum(checked), 6) if checked else UNSET)
    raise NotFound(f"There is no chart {kind!r}; there are {', '.join(WEEKLY)}.")


def station_data(site: Site, code: str) -> StationChart:
    data = data_of(site)
    name = load_course(CURRENT_VERSION).station(code).name
    return station_chart(code, name, [data.documents(w).matrix for w in _other_weeks(data)])


TITLES = {
    "ranking": "Who leads: shares passed with their intervals",
    "weeks": "Each model over the weeks",
    "stops": "Where agents stop, station by station",
    "stages": "Where agents stop, stage by stage over the weeks",
    "cost": "Cost against success",
    "station": "This station over the weeks",
}
DESCRIBE: dict[str, Callable[[Any], str]] = {
    "ranking": describe_ranking, "weeks": describe_weeks, "stops": describe_stops,
    "stages": describe_stages, "cost": describe_cost, "station": describe_station}


def chart_view(kind: str, data: Any, json_url: str) -> ChartView:
    from web.public.chart_svg import chart_svg  # noqa: PLC0415 - matplotlib is imported with the first chart

    title, description = TITLES[kind], DESCRIBE[kind](data)
    return ChartView(kind=kind, title=title, description=description, json_url=json_url, data=data,
                     # matplotlib escapes every label it writes; the title and description are escaped by fit_to_page
                     svg=Markup(chart_svg(kind, data, title, description)))  # noqa: S704


def weekly_views(site: Site, week: str) -> list[ChartView]:
    views = []
    for kind in WEEKLY:
        data = chart_data(site, kind, week)
        url = f"/api/charts/{kind}.json?week={week}"
        views.append(chart_view(kind, data, url))
        if kind == "stops":
            views.append(chart_view("stages", data, url))
    return views


def render_charts(site: Site, week: str | None) -> Page:
    data = data_of(site)
    context: dict[str, Any] = {"nav": "charts", "week": week, "weeks": data.weeks}
    if week is not None:
        context["charts"] = weekly_views(site, week)
    return site.renderer.page("charts.html", context)


async def charts_page(request: Request) -> Response:
    site: Site = request.app.state.site
    week = data_of(site).pick_week(request.query_params.get("week"))
    key = ("charts", week, site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(render_charts, site, week))
    return send(request, page, max_age=30)


def _json_page(body: msgspec.Struct) -> Page:
    return Page(msgspec.json.encode(body), "application/json", {"Access-Control-Allow-Origin": "*"})


async def chart_json(request: Request) -> Response:
    site: Site = request.app.state.site
    kind = request.path_params["kind"]
    if kind not in WEEKLY:
        raise NotFound(f"There is no chart {kind!r}; there are {', '.join(WEEKLY)}.")
    week = data_of(site).pick_week(request.query_params.get("week"))
    if week is None:
        raise NotFound("There are no public results yet.")
    key = ("chart.json", kind, week, site.version)
    page = site.cache.get(key) or site.cache.put(key, _json_page(await site.call(chart_data, site, kind, week)))
    return send(request, page, max_age=60)


def station_code(raw: str) -> str:
    code = raw.lower()
    try:
        load_course(CURRENT_VERSION).station(code)
    except UnknownStationError:
        raise NotFound(f"The course has no station {code!r}; it has s01 to s18.") from None
    return code


async def station_json(request: Request) -> Response:
    site: Site = request.app.state.site
    code = station_code(request.path_params["code"])
    key = ("station-chart.json", code, site.version)
    page = site.cache.get(key) or site.cache.put(key, _json_page(await site.call(station_data, site, code)))
    return send(request, page, max_age=60)


def station_view(site: Site, code: str) -> ChartView | None:
    """The station page's chart, or None before any week has results."""
    if not data_of(site).weeks:
        return None
    return chart_view("station", station_data(site, code), f"/api/charts/station/{code}.json")


routes = [
    Route("/charts", charts_page),
    Route("/api/charts/station/{code:str}.json", station_json),
    Route("/api/charts/{kind:str}.json", chart_json),
]
