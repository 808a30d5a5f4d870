"""The staff desk: signing in and out, and the overview. The desk's areas (corrections, runs and weeks, manual
tests, the line-up) add their routes here.

Signing in has no session yet, so its form is protected by a double-submit token: a random value in a
SameSite=Strict cookie that the form must repeat.
"""

from __future__ import annotations

import hmac
import secrets

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from web.errors import Forbidden
from web.site import Site
from web.staff import (
    actions,
    correct_here,
    corrections_desk,
    desk_views,
    find_run,
    leaderboard_desk,
    manual,
    operations,
    organisations_desk,
)
from web.staff.guard import end_session, open_session, render, session_of, staff_page
from web.staff.needs import needs_now
from web.staff.session import COOKIE, STAFF, Session, cookie_header
from web.staff.sign_in import check_sign_in

SIGN_IN_COOKIE = "cib_sign_in"


def _safe_next(raw: str | None) -> str:
    # Only paths of the desk itself: never an address elsewhere (an open redirect).
    return raw if raw and raw.startswith("/staff/") and not raw.startswith("//") else "/staff/"


async def sign_in_form(request: Request, error: str | None = None, status: int = 200) -> Response:
    token = request.cookies.get(SIGN_IN_COOKIE) or secrets.token_urlsafe(24)
    response = render(request, "staff/sign_in.html", None, {
        "nav": "", "token": token, "error": error, "next": _safe_next(request.query_params.get("next")),
    }, status)
    response.set_cookie(SIGN_IN_COOKIE, token, max_age=3600, path="/staff", secure=True, httponly=True,
                        samesite="strict")
    return response


async def sign_in(request: Request) -> Response:
    if request.method in ("GET", "HEAD"):  # HEAD is GET without the body (uvicorn drops it)
        return await sign_in_form(request)
    checked = await check_sign_in(request, SIGN_IN_COOKIE, sign_in_form)
    if isinstance(checked, Response):
        return checked
    account, form = checked
    value = await open_session(request, account, STAFF)
    response = RedirectResponse(_safe_next(str(form.get("next", ""))), status_code=303)
    response.set_cookie(**cookie_header(value))  # type: ignore[arg-type]
    response.delete_cookie(SIGN_IN_COOKIE, path="/staff")
    return response


async def sign_out(request: Request) -> Response:
    session = await session_of(request)
    form = await request.form(max_fields=5, max_part_size=1024)
    if session is not None and not hmac.compare_digest(session.csrf.encode(), str(form.get("csrf", "")).encode()):
        raise Forbidden("The form's security token is missing or wrong.")
    if session is not None:
        await end_session(request, session)  # a copy of the cookie stops working too
    response = RedirectResponse("/staff/sign-in", status_code=303)
    response.delete_cookie(COOKIE, path="/staff", secure=True, httponly=True, samesite="strict")
    return response


@staff_page
async def overview(request: Request, session: Session) -> Response:
    site: Site = request.app.state.site
    return render(request, "staff/overview.html", session, {"nav": "", "needs": await site.call(needs_now, site)})


routes = [
    Route("/", overview),
    Route("/sign-in", sign_in, methods=["GET", "POST"]),
    Route("/sign-out", sign_out, methods=["POST"]),
    *correct_here.routes,
    *corrections_desk.routes,
    *desk_views.routes,
    *find_run.routes,
    *actions.routes,
    *operations.routes,
    *manual.routes,
    *leaderboard_desk.routes,
    *organisations_desk.routes,
]
