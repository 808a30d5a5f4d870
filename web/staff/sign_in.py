"""Checking a sign-in form, shared by the staff desk and the members' area.

Signing in has no session yet, so the form is protected by a double-submit token: a random value in a
SameSite=Strict cookie that the form must repeat. Attempts are limited per account and per address, counted
before the password is hashed, in the site's database (every web process counts the same attempts); attempts
for one account from one address take turns, and at most HASHES_AT_ONCE passwords are hashed at once in this
process (argon2id takes 64 MiB each), so a burst of sign-ins costs time, not memory.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

import anyio.to_thread
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from adapters.staff_accounts import Account
from web.errors import Forbidden
from web.staff.guard import desk_of

ShowForm = Callable[[Request, str | None, int], Awaitable[Response]]


async def check_sign_in(
    request: Request, sign_in_cookie: str, show_form: ShowForm
) -> tuple[Account, FormData] | Response:
    """The account and the form when the sign-in holds; otherwise the form again with what went wrong."""
    form = await request.form(max_fields=10, max_part_size=4096)
    cookie, token = request.cookies.get(sign_in_cookie, ""), str(form.get("csrf", ""))
    if not cookie or not hmac.compare_digest(cookie.encode(), token.encode()):
        raise Forbidden("The form's security token is missing or wrong. Reload the sign-in page and try again.")
    desk, site = desk_of(request), request.app.state.site
    email = str(form.get("email", "")).strip().lower()
    address = request.client.host if request.client else "unknown"
    async with desk.turns.turn(email, address):
        wait = await site.call(desk.limiter.attempt, email, address)
        account = None
        if not wait:
            account = await anyio.to_thread.run_sync(
                desk.accounts.verify, email, str(form.get("password", "")), limiter=desk.turns.hashing)
            if account is not None:
                await site.call(desk.limiter.succeeded, email, address)
    if wait:
        response = await show_form(request, f"Too many attempts. Try again in {wait // 60 + 1} minutes.", 429)
        response.headers["Retry-After"] = str(wait)
        return response
    if account is None:
        return await show_form(request, "The e-mail or the password is wrong.", 401)
    return account, form
