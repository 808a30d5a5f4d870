"""Organisations and their private tests on the staff desk: register one, add and remove members, schedule
private runs (on our lab, or at the organisation's own https store with its agent behind the OpenAI-compatible
endpoint, named by its model), and record a written consent with the signed letter (a PDF into the blob store).

Every action is an event recorded through the Record's use cases; the forms carry the session's CSRF token.
"""

from __future__ import annotations

import secrets
from datetime import UTC, date, datetime

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from adapters.staff_accounts import AccountError, normal_email
from domain.courses.course import CURRENT_VERSION, load_course
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.orgs.organisations import OrganisationError
from domain.week.weeks import WeekError, parse_week, week_of
from web.errors import NotFound
from web.site import Site
from web.staff.guard import desk_of, render, staff_action, staff_page
from web.staff.session import Session
from web.uploads import UploadRule, store_upload

MAX_LETTER_BYTES = 5 * 1024 * 1024
MODEL_NAME_MAX = 120


async def _list(request: Request, session: Session, error: str | None = None, status: int = 200) -> Response:
    site: Site = request.app.state.site
    organisations = await site.call(site.runtime.readmodels.organisations)
    return render(request, "staff/organisations.html", session, {
        "nav": "", "organisations": organisations, "error": error, "done": request.query_params.get("done"),
    }, status)


@staff_page
async def organisations(request: Request, session: Session) -> Response:
    return await _list(request, session)


@staff_action
async def register(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    slug, name = str(form.get("slug", "")).strip(), str(form.get("name", "")).strip()
    try:
        await site.call(site.runtime.record.register_organisation, slug=slug, name=name, by=session.email)
    except OrganisationError as error:
        return await _list(request, session, str(error), 400)
    await site.refresh()
    return RedirectResponse(f"/staff/organisations/{slug}?done=registered", status_code=303)


async def _detail(request: Request, session: Session, error: str | None = None, status: int = 200) -> Response:
    site: Site = request.app.state.site
    slug = request.path_params["slug"]
    try:
        organisation = await site.call(site.runtime.record.organisation, slug)
    except OrganisationError:
        raise NotFound(f"There is no organisation {slug}.") from None
    runs = await site.call(site.runtime.readmodels.private_runs, slug)
    facts = [o for o in await site.call(site.runtime.readmodels.organisations) if o.slug == slug]
    return render(request, "staff/organisation.html", session, {
        "nav": "", "organisation": organisation, "members": sorted(organisation.members),
        "runs": sorted(runs, key=lambda r: (r.scheduled_at, r.run_id), reverse=True),
        "consents": facts[0].consents if facts else [], "course": load_course(CURRENT_VERSION),
        "this_week": week_of(datetime.now(UTC)), "max_mb": MAX_LETTER_BYTES // (1024 * 1024),
        "error": error, "done": request.query_params.get("done"),
    }, status)


@staff_page
async def organisation(request: Request, session: Session) -> Response:
    return await _detail(request, session)


def _back(slug: str, done: str) -> Response:
    return RedirectResponse(f"/staff/organisations/{slug}?done={done}", status_code=303)


@staff_action
async def add_member(request: Request, session: Session, form: FormData) -> Response:
    """Membership is an event; the member's sign-in account is made with a one-time password shown once."""
    site: Site = request.app.state.site
    slug = request.path_params["slug"]
    accounts = desk_of(request).accounts
    try:
        email = normal_email(str(form.get("email", "")))
        await site.call(site.runtime.record.add_member, slug, email, by=session.email)
    except (OrganisationError, AccountError) as error:
        return await _detail(request, session, str(error), 400)
    existing = await site.call(accounts.get, email)
    if existing is None:
        password = secrets.token_urlsafe(15)
        await site.call(accounts.add, email, password, "member", org=slug)
        return render(request, "staff/member_added.html", session,
                      {"nav": "", "slug": slug, "email": email, "password": password})
    return _back(slug, "member+added")


@staff_action
async def remove_member(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    slug = request.path_params["slug"]
    try:
        await site.call(site.runtime.record.remove_member, slug, str(form.get("email", "")), by=session.email)
    except OrganisationError as error:
        return await _detail(request, session, str(error), 400)
    # A removed member is signed out at once, everywhere (its membership is also checked on every request).
    await site.call(desk_of(request).sessions.end_all, str(form.get("email", "")).strip().lower())
    return _back(slug, "member+removed")


@staff_action
async def schedule(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    slug = request.path_params["slug"]
    course = load_course(CURRENT_VERSION)
    try:
        station, model = str(form.get("station", "")), str(form.get("model", "")).strip()
        if station not in course.codes:
            raise OrganisationError("pick one of the course's stations")
        if not model or len(model) > MODEL_NAME_MAX or any(c.isspace() for c in model):
            raise OrganisationError(
                "name the agent's model as the OpenAI-compatible endpoint knows it, e.g. acme-agent-2"
            )
        try:
            week = parse_week(str(form.get("week", "")))
        except WeekError as error:
            raise OrganisationError(str(error)) from None
        command = ScheduleRun.on_course(
            org=slug, station=station, model=model, course_version=course.version, week=week,
            requested_by=session.email, target_url=str(form.get("target_url", "")) or None,
        )
        await site.call(schedule_runs, site.runtime.record, [command])
    except OrganisationError as error:
        return await _detail(request, session, str(error), 400)
    await site.refresh()
    return _back(slug, "private+run+scheduled")


LETTER = UploadRule(what="the consent letter", max_bytes=MAX_LETTER_BYTES, types={"application/pdf": "PDF"},
                    kind_of=lambda head: "PDF" if head.startswith(b"%PDF-") else None,
                    missing="attach the signed consent letter (PDF)",
                    wrong_content="the file's content is not a PDF")


@staff_action(max_bytes=MAX_LETTER_BYTES + 64 * 1024, max_files=1, max_fields=20)
async def record_consent(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    slug = request.path_params["slug"]
    try:
        run_ids = [r for r in str(form.get("run_ids", "")).split() if r]
        raw_until = str(form.get("until", "")).strip()
        try:
            until = date.fromisoformat(raw_until) if raw_until else None
        except ValueError:
            raise OrganisationError("the date must look like 2026-11-30") from None
        # The letter last, once the rest holds: a refused form stores nothing. In pieces, never whole in memory.
        digest = await store_upload(site, form.get("letter"), LETTER, OrganisationError)
        await site.call(
            site.runtime.record.record_consent, slug, run_ids=run_ids, until=until, document_sha256=digest,
            reference=str(form.get("reference", "")), by=session.email,
        )
    except OrganisationError as error:
        return await _detail(request, session, str(error), 400)
    await site.refresh()
    return _back(slug, "consent+recorded")


routes = [
    Route("/organisations", organisations),
    Route("/organisations", register, methods=["POST"]),
    Route("/organisations/{slug:str}", organisation),
    Route("/organisations/{slug:str}/members", add_member, methods=["POST"]),
    Route("/organisations/{slug:str}/members/remove", remove_member, methods=["POST"]),
    Route("/organisations/{slug:str}/runs", schedule, methods=["POST"]),
    Route("/organisations/{slug:str}/consents", record_consent, methods=["POST"]),
]
