"""Checking a sign-in form, shared by the staff desk and the members' area.

Signing in has no session yet, so the form is protected by a double-submit token: a random value in a
SameSite=Strict cookie that the form must repeat. Failed attempts are limited per account and per address.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from web.errors import Forbidden
from web.staff.accounts import Account
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
    wait = desk.limiter.retry_after(email, address)
    if wait:
        response = await show_form(request, f"Too many attempts. Try again in {wait // 60 + 1} minutes.", 429)
        response.headers["Retry-After"] = str(wait)
        return response
    account = await site.call(desk.accounts.verify, email, str(form.get("password", "")))
    if account is None:
        desk.limiter.failed(email, address)
        return await show_form(request, "The e-mail or the password is wrong.", 401)
    desk.limiter.succeeded(email)
    return account, form
