"""Who may use the staff desk: every page needs a signed-in account, every form also the session's CSRF token
and the staff role (auditors read only). Staff pages are rendered per request and never cached.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, overload
from urllib.parse import quote

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from adapters.staff_accounts import DESK_ROLES, Account, StaffAccounts
from web.errors import Forbidden
from web.site import Site
from web.staff.action_log import StaffActions
from web.staff.ratelimit import SignInLimiter, SignInTurns, SqlSignInLimiter
from web.staff.session import (
    COOKIE,
    STAFF,
    Session,
    SessionCodec,
    SessionStore,
    csrf_ok,
    load_or_create_secret,
)

MAX_FORM_BYTES = 64 * 1024
"""Forms without a file; the manual-test upload sets its own limit."""


@dataclass
class Desk:
    accounts: StaffAccounts
    codec: SessionCodec
    limiter: SignInLimiter | SqlSignInLimiter
    turns: SignInTurns
    sessions: SessionStore
    actions: StaffActions = field(default_factory=StaffActions)
    """Every staff action so far, folded from the log when the list is asked for."""


async def start_staff(site: Site) -> None:
    db = site.runtime.readmodels.db  # one database handle per process, the runtime's
    await site.call(db.migrate)
    secret = await site.call(load_or_create_secret, site.settings.site_secret, site.settings.data_dir)
    site.desk = Desk(StaffAccounts(db), SessionCodec(secret), SqlSignInLimiter(db), SignInTurns(),
                     SessionStore(db))


def desk_of(request: Request) -> Desk:
    site: Site = request.app.state.site
    return site.desk


async def open_session(request: Request, account: Account, audience: str) -> str:
    """A new session for the account, stored so that signing out can end it; the cookie's value."""
    desk, site = desk_of(request), request.app.state.site
    value, session = desk.codec.issue(account.email, account.role, desk.codec.fingerprint(account.password_hash),
                                      audience)
    await site.call(desk.sessions.open, session)
    return value


async def end_session(request: Request, session: Session) -> None:
    """Signing out ends every session of the account (every browser, both areas), in every site process."""
    await request.app.state.site.call(desk_of(request).sessions.end_all, session.email)


async def account_of(request: Request, cookie: str, audience: str) -> tuple[Session, Account] | None:
    """The session in the cookie and its account, when the session is still open and the account unchanged."""
    desk, site = desk_of(request), request.app.state.site
    session = desk.codec.read(request.cookies.get(cookie), audience)
    if session is None:
        return None
    account = await site.call(_open_account, desk, session)
    # A removed account, a new role or a new password ends the session.
    if account is None or account.role != session.role:
        return None
    if not hmac.compare_digest(desk.codec.fingerprint(account.password_hash), session.fingerprint):
        return None
    return session, account


def _open_account(desk: Desk, session: Session) -> Account | None:
    return desk.accounts.get(session.email) if desk.sessions.is_open(session) else None


async def session_of(request: Request) -> Session | None:
    found = await account_of(request, COOKIE, STAFF)
    if found is None:
        return None
    session, account = found
    if account.role not in DESK_ROLES:  # an organisation's member never reads the desk (it shows every org)
        return None
    return session


Page = Callable[[Request, Session], Awaitable[Response]]
Action = Callable[[Request, Session, FormData], Awaitable[Response]]


def staff_page(handler: Page) -> Callable[[Request], Awaitable[Response]]:
    async def guarded(request: Request) -> Response:
        session = await session_of(request)
        if session is None:
            return RedirectResponse(f"/staff/sign-in?next={quote(request.url.path)}", status_code=303)
        return await handler(request, session)

    return guarded


Guarded = Callable[[Request], Awaitable[Response]]


@overload
def staff_action(handler: Action, /) -> Guarded: ...
@overload
def staff_action(*, max_bytes: int = MAX_FORM_BYTES, **form_limits: int) -> Callable[[Action], Guarded]: ...
def staff_action(
    handler: Action | None = None, /, *, max_bytes: int = MAX_FORM_BYTES, **form_limits: int
) -> Guarded | Callable[[Action], Guarded]:
    """A POST that changes the record: signed in, staff role, CSRF token right; the body within max_bytes."""

    def wrap(inner: Action) -> Callable[[Request], Awaitable[Response]]:
        async def guarded(request: Request) -> Response:
            session = await session_of(request)
            if session is None:
                raise Forbidden("Sign in to the staff desk first.")
            if session.role != "staff":
                raise Forbidden("Auditors can read the staff desk but not change the record.")
            length = request.headers.get("content-length")
            if length is None or not (length.isascii() and length.isdigit()):
                raise Forbidden("The form must say how long it is (Content-Length).")
            if int(length) > max_bytes:
                from starlette.exceptions import HTTPException

                raise HTTPException(413, f"The form is larger than {max_bytes // (1024 * 1024) or 1} MB allows.")
            form = await request.form(**form_limits)
            if not csrf_ok(session, form.get("csrf")):
                raise Forbidden("The form's security token is missing or wrong. Reload the page and try again.")
            return await inner(request, session, form)

        return guarded

    return wrap(handler) if handler is not None else wrap


def render(request: Request, template: str, session: Session | None, context: dict[str, Any],
           status: int = 200) -> Response:
    site: Site = request.app.state.site
    defaults = {"error": None, "done": None}
    html = site.renderer.html(template, {**defaults, **context, "session": session,
                                         "csrf": session.csrf if session else ""})
    return Response(html, status_code=status, media_type="text/html; charset=utf-8",
                    headers={"Cache-Control": "no-store"})
