"""A correction started where the error was seen: the form of one kind, filled in from the page it was opened on.

"Correct this run" (a recording, a Matrix cell) and "Correct this week" (a ranking row, a station column) open
/staff/corrections/new with what they correct in the address; the form shows that, the kinds of change it can
take as links, and only the fields of the kind chosen. No id is ever typed. Its preview and issuing are the
corrections desk's (web/staff/corrections_desk.py); issuing lands on the entry in the public log.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.agent.verdicts import Outcome
from domain.errata.corrections import CorrectionError, check_model_ran, check_station_ran
from domain.eventlog.record import UnknownRunError
from domain.week.weeks import WeekError, parse_week
from web.errors import NotFound
from web.public.results import data_of
from web.site import Site
from web.staff.guard import render, staff_page
from web.staff.session import Session

OUTCOMES = list(Outcome.__args__)  # type: ignore[attr-defined]

CHANGES: dict[str, list[tuple[str, str]]] = {
    "run": [("void", "Void the run (not a result)"), ("set_outcome", "Set its outcome"), ("note", "Note only")],
    "model_week": [("exclude", "Leave the model out of the week"), ("note", "Note only")],
    "station_week": [("exclude", "Leave the station out of the week"), ("note", "Note only")],
}
"""The kinds each target can take, the first the default; every pair is one of CORRECTION_KINDS."""

TARGET_FIELDS = {"run": ("run_id",), "model_week": ("week", "model"), "station_week": ("week", "station")}


class FormOfOneKind:
    """What the form shows: the target in words, the kinds as links, the chosen kind's own fields."""

    def __init__(self, fields: dict[str, str], subject: str, recording: str | None) -> None:
        self.fields = fields
        self.target, self.change = fields["target"], fields["change"]
        self.subject = subject
        self.recording = recording
        self.kinds = [(change, label, self.link(change)) for change, label in CHANGES[self.target]]
        self.asks_outcome = self.change == "set_outcome"

    def link(self, change: str) -> str:
        query = {k: self.fields[k] for k in ("target", *TARGET_FIELDS[self.target])}
        return f"/staff/corrections/new?{urlencode({**query, 'change': change})}"

    @property
    def hidden(self) -> list[tuple[str, str]]:
        return [(k, self.fields[k]) for k in ("target", "change", *TARGET_FIELDS[self.target])]


def form_of_one_kind(site: Site, given: dict[str, str], *, ran: bool = True) -> FormOfOneKind:
    """The form for what the address names; NotFound when it names no public run or week, or (with `ran`) a model
    or station with no run that counts that week. A refusal shows the form again without `ran`: a run that
    started in the next week since the form opened leaves it naming nothing, and the reason says so."""
    target = given.get("target", "")
    if target not in CHANGES:
        raise NotFound("Open a correction from a recording, a Matrix cell, a ranking row or a station column.")
    changes = [c for c, _ in CHANGES[target]]
    asked = given.get("change", "")
    change = asked if asked in changes else changes[0]
    fields = {"target": target, "change": change}
    fields.update({k: given.get(k, "").strip() for k in TARGET_FIELDS[target]})
    fields.update({k: given.get(k, "") for k in ("outcome", "reason", "public_text")})
    if target == "run":
        try:
            run = data_of(site).readmodels.run(fields["run_id"])
        except (UnknownRunError, ValueError):
            raise NotFound("There is no public run with that id.") from None
        outcome = run.verdict.outcome if run.verdict else run.status.replace("_", " ")
        subject = f"the run of {run.model} on {run.station.upper()} in {run.week} ({outcome.replace('_', ' ')})"
        return FormOfOneKind(fields, subject, f"/staff/runs/{run.run_id}")
    try:
        fields["week"] = parse_week(fields["week"])
    except WeekError as error:
        raise NotFound(str(error)) from None
    if data_of(site).known(fields["week"]) is None:
        raise NotFound(f"There are no public results for week {fields['week']}.")
    what = fields["model"] if target == "model_week" else fields.get("station", "").upper()
    if not what:
        raise NotFound("Name the model or the station to correct.")
    if ran:
        _check_it_ran(site, target, fields)
    return FormOfOneKind(fields, f"{what} in {fields['week']}", None)


def _check_it_ran(site: Site, target: str, fields: dict[str, str]) -> None:
    """The form opens only for what issuing it would accept: a model or station with a run that counts that week."""
    data, week = data_of(site), fields["week"]
    try:
        if target == "model_week":
            check_model_ran(fields["model"], week, data.models_with_runs(week))
        else:
            check_station_ran(fields["station"].lower(), week, data.stations_with_runs(week))
    except CorrectionError as error:
        raise NotFound(str(error)) from None


def render_form(request: Request, session: Session, form: FormOfOneKind, error: str | None = None,
                status: int = 200) -> Response:
    context: dict[str, Any] = {"nav": "", "form": form, "outcomes": OUTCOMES, "error": error}
    return render(request, "staff/correct_here.html", session, context, status)


@staff_page
async def new_correction(request: Request, session: Session) -> Response:
    site: Site = request.app.state.site
    form = await site.call(form_of_one_kind, site, dict(request.query_params))
    return render_form(request, session, form)


routes = [Route("/corrections/new", new_correction)]
