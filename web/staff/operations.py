"""Scheduling runs and repeats, publishing a week, managing the line-up: each an event through the record.

Scheduled runs are executed by the workers, which take every scheduled run they find in the log.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import msgspec
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from adapters.models.lineup import BASELINES, entrant
from domain.agent.lineup import Entrant, LineUpError
from domain.courses.course import CURRENT_VERSION, load_course
from domain.eventlog.commands import PublishWeek, ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.publications import PublicationError
from domain.week.publishing import RunsStillOpenError, UnknownWeekError, publish_week
from domain.week.weeks import WeekError, open_week, parse_week, week_of
from web.public.results import data_of
from web.site import Site
from web.staff.guard import render, staff_action, staff_page
from web.staff.session import Session

MAX_REPEATS = 20


class FormError(ValueError):
    pass


def _week(raw: object) -> str:
    try:
        return parse_week(str(raw or ""))
    except WeekError as error:
        raise FormError(str(error)) from None


def _open_week(site: Site, raw: object) -> str:
    """The week in progress, the only one runs can be scheduled for: a run counts for the week it starts in."""
    try:
        return open_week(str(raw or ""), site.runtime.record.clock())
    except WeekError as error:
        raise FormError(str(error)) from None


async def _page(request: Request, session: Session, error: str | None = None, status: int = 200) -> Response:
    site: Site = request.app.state.site
    lineup = await site.call(site.runtime.record.lineup)
    from web.public.spend import week_spend

    spend = await site.call(week_spend, site, week_of(site.runtime.record.clock()))
    return render(request, "staff/operations.html", session, {
        "spend": spend, "refused": lineup.refused(spend.week),
        "unavailable": [m for m in lineup.unavailable(spend.week) if m not in lineup.refused(spend.week)],
        "nav": "", "error": error, "done": request.query_params.get("done"), "weeks": data_of(site).weeks,
        "course": load_course(CURRENT_VERSION), "entrants": sorted(lineup.entrants.values(), key=lambda e: e.model),
        "this_week": week_of(site.runtime.record.clock()), "today": date.today().isoformat(),
    }, status)


@staff_page
async def operations(request: Request, session: Session) -> Response:
    return await _page(request, session)


def _schedule_commands(site: Site, form: FormData, by: str) -> list[ScheduleRun]:
    course = load_course(CURRENT_VERSION)
    model = str(form.get("model", "")).strip()
    if not model:
        raise FormError("name the model (or built-in agent) to run")
    if model not in BASELINES and entrant(model) is None:  # as the CLI's --model (ops.arguments.model)
        raise FormError(f"no built-in agent or line-up model named {model!r}")
    stations = [str(s) for s in form.getlist("station")] or course.codes
    unknown = [s for s in stations if s not in course.codes]
    if unknown:
        raise FormError(f"no station {unknown[0]!r} in course {course.version}")
    repeats_text = str(form.get("repeats", "1"))
    if not (repeats_text.isascii() and repeats_text.isdigit()) or not 1 <= int(repeats_text) <= MAX_REPEATS:
        raise FormError(f"repeats must be a whole number from 1 to {MAX_REPEATS}")
    week = _open_week(site, form.get("week"))
    return [
        ScheduleRun.on_course(station=s, model=model, requested_by=by, week=week, repeat=r)
        for s in stations for r in range(int(repeats_text))
    ]


def _repeat_commands(site: Site, week: str, by: str) -> list[ScheduleRun]:
    """A new attempt for each cell of the week whose newest attempt was cut short (never a result)."""
    runs = msgspec.json.decode(data_of(site).readmodels.runs_index(week=week))["runs"]
    newest: dict[tuple[str, str, int], dict[str, Any]] = {}
    for run in runs:
        key = (run["model"], run["station"], run["repeat"])
        if key not in newest or run["attempt"] > newest[key]["attempt"]:
            newest[key] = run
    return [
        ScheduleRun.on_course(station=r["station"], model=r["model"], requested_by=by, week=week,
                              repeat=r["repeat"], attempt=r["attempt"] + 1, kind=r["kind"])
        for r in newest.values() if r["status"] == "cut_short"
    ]


@staff_action
async def schedule(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    try:
        if form.get("what") == "repeats":
            commands = await site.call(_repeat_commands, site, _open_week(site, form.get("week")), session.email)
        else:
            commands = _schedule_commands(site, form, session.email)
    except FormError as error:
        return await _page(request, session, str(error), 400)
    ids = await site.call(schedule_runs, site.runtime.record, commands)
    await site.refresh()
    return RedirectResponse(f"/staff/operations?done=scheduled+{len(ids)}+runs", status_code=303)


@staff_action
async def publish(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    try:
        command = PublishWeek(week=_week(form.get("week")), by=session.email)
        published = await site.call(publish_week, site.runtime.record, data_of(site), command)
    except (FormError, UnknownWeekError, PublicationError, RunsStillOpenError) as error:
        return await _page(request, session, str(error), 400)
    await site.refresh()
    return RedirectResponse(f"/staff/operations?done=published+{published.week}", status_code=303)


def _entrant(form: FormData) -> Entrant:
    def number(name: str, default: str = "0") -> float:
        try:
            return float(str(form.get(name) or default))
        except ValueError:
            raise FormError(f"{name.replace('_', ' ')} must be a number") from None

    try:
        since = date.fromisoformat(str(form.get("since", "")))
        until = date.fromisoformat(str(form["until"])) if form.get("until") else None
    except ValueError:
        raise FormError("dates are written 2026-11-30") from None
    model, label, route = (str(form.get(k, "")).strip() for k in ("model", "label", "route"))
    if not model or not label or not route:
        raise FormError("a line-up entry needs a model name, a label and a route")
    return Entrant(
        model=model, label=label, route=route, since=since, until=until,
        price_in_per_mtok=number("price_in_per_mtok"), price_out_per_mtok=number("price_out_per_mtok"),
        weekly=form.get("weekly") == "on", repeats=int(number("repeats", "1")),
    )


@staff_action
async def set_entrant(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    try:
        entrant = _entrant(form)
        await site.call(site.runtime.record.set_entrants, [entrant], by=session.email)
    except (FormError, LineUpError) as error:
        return await _page(request, session, str(error), 400)
    await site.refresh()
    return RedirectResponse(f"/staff/operations?done=line-up+{entrant.model}", status_code=303)


routes = [
    Route("/operations", operations),
    Route("/operations/schedule", schedule, methods=["POST"]),
    Route("/operations/publish", publish, methods=["POST"]),
    Route("/operations/lineup", set_entrant, methods=["POST"]),
]
