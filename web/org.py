"""The members' area (/org): an organisation's people see its private tests, and only its own.

Members sign in here with accounts of role `member` (bound to one organisation); staff and auditors may sign in
too and see every organisation's tests, read only. The session cookie is scoped to /org. A private run that the
viewer may not see answers 404, exactly as a run that does not exist, so its existence is never revealed; the
check itself is in `web.public.recording.load_recording`, the one gate every recording, JSON and blob passes.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from adapters.staff_accounts import DESK_ROLES
from domain.orgs.organisations import OrganisationError
from domain.projections.facts import RunFact
from web.errors import Forbidden, NotFound
from web.public.recording import STREAMED, NotPublic, Recording, load_recording, parse_run_id
from web.public.runs import render_recording, streamed_blob, video_response
from web.site import Site
from web.staff.guard import account_of, end_session, open_session, render
from web.staff.session import LIFETIME, MEMBERS, Session
from web.staff.sign_in import check_sign_in

COOKIE = "cib_org"
SIGN_IN_COOKIE = "cib_org_sign_in"


@dataclass(frozen=True)
class Viewer:
    session: Session
    org: str | None
    """The member's organisation; None for staff and auditors, who see every organisation."""

    def sees(self, org: str) -> bool:
        return self.org is None or self.org == org


async def viewer_of(request: Request) -> Viewer | None:
    """The signed-in viewer: a member still in its organisation (a removed member sees nothing), or staff."""
    site: Site = request.app.state.site
    found = await account_of(request, COOKIE, MEMBERS)
    if found is None:
        return None
    session, account = found
    if account.role in DESK_ROLES:
        return Viewer(session, None)
    if account.role != "member" or not account.org:
        return None
    try:
        organisation = await site.call(site.runtime.record.organisation, account.org)
    except OrganisationError:
        return None
    return Viewer(session, account.org) if account.email in organisation.members else None


def _page(request: Request, template: str, viewer: Viewer | None, context: dict[str, object],
          status: int = 200) -> Response:
    return render(request, template, viewer.session if viewer else None, {"nav": "", "viewer": viewer, **context},
                  status)


async def sign_in_form(request: Request, error: str | None = None, status: int = 200) -> Response:
    token = request.cookies.get(SIGN_IN_COOKIE) or secrets.token_urlsafe(24)
    response = _page(request, "org/sign_in.html", None, {"token": token, "error": error}, status)
    response.set_cookie(SIGN_IN_COOKIE, token, max_age=3600, path="/org", secure=True, httponly=True,
                        samesite="strict")
    return response


async def sign_in(request: Request) -> Response:
    if request.method in ("GET", "HEAD"):  # HEAD is GET without the body (uvicorn drops it)
        return await sign_in_form(request)
    checked = await check_sign_in(request, SIGN_IN_COOKIE, sign_in_form)
    if isinstance(checked, Response):
        return checked
    account, form = checked
    value = await open_session(request, account, MEMBERS)
    response = RedirectResponse("/org", status_code=303)
    response.set_cookie(COOKIE, value, max_age=LIFETIME, path="/org", secure=True, httponly=True, samesite="strict")
    response.delete_cookie(SIGN_IN_COOKIE, path="/org")
    return response


async def sign_out(request: Request) -> Response:
    viewer = await viewer_of(request)
    form = await request.form(max_fields=5, max_part_size=1024)
    if viewer is not None and not hmac.compare_digest(viewer.session.csrf.encode(), str(form.get("csrf", "")).encode()):
        raise Forbidden("The form's security token is missing or wrong.")
    if viewer is not None:
        await end_session(request, viewer.session)  # a copy of the cookie stops working too
    response = RedirectResponse("/org/sign-in", status_code=303)
    response.delete_cookie(COOKIE, path="/org", secure=True, httponly=True, samesite="strict")
    return response


async def index(request: Request) -> Response:
    viewer = await viewer_of(request)
    if viewer is None:
        return RedirectResponse("/org/sign-in", status_code=303)
    site: Site = request.app.state.site
    runs: list[RunFact] = await site.call(site.runtime.readmodels.private_runs, viewer.org)
    runs.sort(key=lambda r: (r.scheduled_at, r.run_id), reverse=True)
    organisations = await site.call(site.runtime.readmodels.organisations)
    names = {o.slug: o.name for o in organisations if viewer.sees(o.slug)}
    return _page(request, "org/index.html", viewer, {"runs": runs, "names": names})


async def _recording(request: Request) -> tuple[Site, Recording]:
    """The run when the viewer may see it; 404 for anyone else, signed in or not (never revealing it exists)."""
    site: Site = request.app.state.site
    run_id = parse_run_id(request.path_params["run_id"])
    viewer = await viewer_of(request)
    if viewer is None or run_id is None:
        raise NotFound("There is no such run.")
    try:
        recording = await site.call(load_recording, site.runtime.record, run_id, viewer.sees)
    except NotPublic:
        raise NotFound("There is no such run.") from None
    if recording.private_test is None:
        raise NotFound("There is no such run.")  # public runs live at /runs
    return site, recording


async def run_page(request: Request) -> Response:
    site, recording = await _recording(request)
    page = await site.call(render_recording, site, recording, "/org/runs/")
    return _no_store(page.body, page.media_type)


async def run_blob(request: Request) -> Response:
    site, recording = await _recording(request)
    digest = request.path_params["digest"]
    media_type = recording.blobs().get(digest)
    if media_type is None:
        raise NotFound("This run has no such screenshot, element list, trace or video.")
    if media_type in STREAMED:
        return await streamed_blob(request, site, recording, digest, {"Cache-Control": "private, no-store"})
    try:
        body = await site.call(site.runtime.blobs.get, digest)
    except KeyError:
        raise NotFound("The blob is referenced by the run but missing from the store.") from None
    return _no_store(body, media_type)


async def run_video(request: Request) -> Response:
    site, recording = await _recording(request)
    return await video_response(request, site, recording, {"Cache-Control": "private, no-store"})


def _no_store(body: bytes, media_type: str) -> Response:
    return Response(body, media_type=media_type, headers={"Cache-Control": "private, no-store"})


routes = [
    Route("/org", index),
    Route("/org/sign-in", sign_in, methods=["GET", "POST"]),
    Route("/org/sign-out", sign_out, methods=["POST"]),
    Route("/org/runs/{run_id:str}", run_page),
    Route("/org/runs/{run_id:str}/blobs/{digest:str}", run_blob, methods=["GET", "HEAD"]),
    Route("/org/runs/{run_id:str}/video.webm", run_video, methods=["GET", "HEAD"]),
]
