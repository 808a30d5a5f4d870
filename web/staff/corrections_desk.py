"""Issuing and withdrawing corrections. A correction is previewed (its effect on the week's ranking) before it
is confirmed; both issuing and withdrawing are events through the record, and show on the public log.
"""

from __future__ import annotations

from uuid import UUID

import msgspec
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from domain.courses.course import CURRENT_VERSION, load_course
from domain.errata.corrections import CorrectionError
from domain.eventlog.handlers import issue_correction
from domain.eventlog.record import UnknownRunError
from web.errors import NotFound
from web.public.results import data_of
from web.site import Site
from web.staff.correct_here import form_of_one_kind, render_form
from web.staff.guard import render, staff_action, staff_page
from web.staff.preview import FIELDS, PreviewError, correction_command, preview
from web.staff.session import Session


def _fields(form: FormData) -> dict[str, str]:
    fields = {k: str(form.get(k, "")) for k in FIELDS}
    if form.get("from") == "here":  # the one-kind form: its preview and refusals keep to that form
        fields["from"] = "here"
    return fields


async def _page(request: Request, session: Session, *, error: str | None = None, status: int = 200) -> Response:
    site: Site = request.app.state.site
    log = msgspec.json.decode(await site.call(data_of(site).readmodels.corrections))["corrections"]
    return render(request, "staff/corrections.html", session, {
        "nav": "", "entries": list(reversed(log)), "error": error, "weeks": data_of(site).weeks,
        "done": request.query_params.get("done"), "models": await site.call(_models, site),
        "stations": load_course(CURRENT_VERSION).codes,
    }, status)


def _models(site: Site) -> list[str]:
    """The models of the newest week, offered when naming a model's week."""
    week = data_of(site).default_week()
    return [m.model for m in data_of(site).documents(week).matrix.models] if week else []


async def _refused(request: Request, session: Session, fields: dict[str, str], error: str) -> Response:
    """The form again with the reason, as it was filled in: the one-kind form when it came from there."""
    site: Site = request.app.state.site
    if fields.get("from") == "here":
        try:
            form = await site.call(form_of_one_kind, site, fields, ran=False)
        except NotFound:
            pass
        else:
            return render_form(request, session, form, error, 400)
    return await _page(request, session, error=error, status=400)


@staff_page
async def corrections(request: Request, session: Session) -> Response:
    return await _page(request, session)


@staff_action
async def preview_correction(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    fields = _fields(form)
    try:
        command = correction_command(fields, session.email)
        effect = await site.call(preview, data_of(site), site.runtime.record, command)
    except PreviewError as error:
        return await _refused(request, session, fields, str(error))
    return render(request, "staff/correction_preview.html", session, {"nav": "", "form": fields, **effect})


@staff_action
async def issue(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    fields = _fields(form)
    try:
        command = correction_command(fields, session.email)
        correction_id = await site.call(issue_correction, site.runtime.record, data_of(site), command)
    except (PreviewError, CorrectionError, UnknownRunError) as error:
        return await _refused(request, session, fields, str(error))
    await site.refresh()
    # The public log's entry: what readers now see is what staff should check. The query makes it an address the
    # browser has not cached (the log is cached for 30 s), so the new entry is there.
    return RedirectResponse(f"/corrections?issued={correction_id}#c-{correction_id}", status_code=303)


@staff_action
async def withdraw(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    try:
        correction_id = UUID(request.path_params["correction_id"])
    except ValueError:
        raise NotFound("There is no such correction.") from None
    try:
        await site.call(site.runtime.record.withdraw_correction, correction_id,
                        reason=str(form.get("reason", "")), by=session.email)
    except LookupError:
        raise NotFound("There is no such correction.") from None
    except CorrectionError as error:
        return await _page(request, session, error=str(error), status=400)
    await site.refresh()
    return RedirectResponse(f"/staff/corrections?done={correction_id}", status_code=303)


routes = [
    Route("/corrections", corrections),
    Route("/corrections/preview", preview_correction, methods=["POST"]),
    Route("/corrections", issue, methods=["POST"]),
    Route("/corrections/{correction_id:str}/withdraw", withdraw, methods=["POST"]),
]
