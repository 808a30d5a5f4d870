"""Finding a run by model, station, week, outcome and cause, for staff and auditors. The form is a plain GET form
(it works without JavaScript); with htmx each change narrows the results in place. Every result links to its
recording in the desk's view, from where it can be corrected.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.agent.verdicts import CutShortCause, Outcome
from domain.week.weeks import WeekError, parse_week
from web.public.results import data_of
from web.site import Site
from web.staff.guard import render, staff_page
from web.staff.session import Session

SHOWN = 200
"""Results listed at most: the rest are counted, to be narrowed."""
OUTCOMES = list(Outcome.__args__)  # type: ignore[attr-defined]
CAUSES = list(CutShortCause.__args__)  # type: ignore[attr-defined]
QUERY = ("model", "station", "week", "outcome", "cause")
ANY_CAUSE = "any"
"""Runs cut short, whatever the cause."""


class RunQuery(msgspec.Struct, frozen=True, kw_only=True):
    model: str = ""
    station: str = ""
    week: str = ""
    outcome: str = ""
    cause: str = ""

    @classmethod
    def of(cls, params: dict[str, str]) -> RunQuery:
        return cls(**{k: params.get(k, "").strip() for k in QUERY})

    def matches(self, run: dict[str, Any]) -> bool:
        return (
            self.model.lower() in run["model"].lower()
            and (not self.station or run["station"] == self.station.lower())
            and (not self.outcome or run["outcome"] == self.outcome)
            and (not self.cause or run["cut_short_cause"] == self.cause
                 or (self.cause == ANY_CAUSE and run["status"] == "cut_short"))
        )


def found_runs(site: Site, query: RunQuery) -> tuple[list[dict[str, Any]], int, str | None]:
    """(the runs shown, how many match, a problem with the query)."""
    week = None
    if query.week:
        try:
            week = parse_week(query.week)
        except WeekError as error:
            return [], 0, f"week: {error}"
    runs = msgspec.json.decode(data_of(site).readmodels.runs_index(week=week))["runs"]
    matching = [r for r in runs if query.matches(r)]
    matching.sort(key=lambda r: (r["week"], r["scheduled_at"]), reverse=True)
    return matching[:SHOWN], len(matching), None


@staff_page
async def find_run(request: Request, session: Session) -> Response:
    site: Site = request.app.state.site
    query = RunQuery.of(dict(request.query_params))
    runs, total, problem = await site.call(found_runs, site, query)
    template = "staff/_found_runs.html" if request.headers.get("hx-request") else "staff/find_run.html"
    return render(request, template, session, {
        "nav": "", "query": query, "runs": runs, "total": total, "problem": problem, "shown": SHOWN,
        "outcomes": OUTCOMES, "causes": CAUSES, "weeks": data_of(site).weeks,
    })


routes = [Route("/runs", find_run)]
