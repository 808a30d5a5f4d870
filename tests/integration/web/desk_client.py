"""Signing in to the staff desk from a test client, the way a browser does: read the form's token, post it."""

from __future__ import annotations

import re
from typing import Any

STAFF = ("editor@canitbuy.com", "a long staff password")
AUDITOR = ("auditor@canitbuy.com", "a long auditor password")


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "the page has no CSRF token"
    return match.group(1)


def sign_in(client: Any, email: str, password: str) -> None:
    token = csrf_of(client.get("/staff/sign-in").text)
    response = client.post("/staff/sign-in", data={"csrf": token, "email": email, "password": password},
                           follow_redirects=False)
    assert response.status_code == 303, response.text


def sign_out(client: Any) -> None:
    client.cookies.clear()
