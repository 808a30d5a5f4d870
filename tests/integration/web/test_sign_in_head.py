"""HEAD on the two sign-in pages is answered as GET is, without a body (HTTP's HEAD is GET without the body; a
link checker or a monitor asks with it), while a sign-in POST without its form token is still refused. Requests go
through the real app (the `site` fixture, on SQLite and PostgreSQL); the HEAD bodies are read off the wire from
uvicorn."""

from __future__ import annotations

import httpx
import pytest
from desk_client import STAFF, csrf_of

from tests.e2e.web.served import served
from web.app import create_app

SIGN_IN_PAGES = ["/staff/sign-in", "/org/sign-in"]


@pytest.mark.parametrize("path", SIGN_IN_PAGES)
def test_head_on_a_sign_in_page_is_answered_as_get_is(site, path: str) -> None:
    got, head = site.client.get(path), site.client.head(path)
    assert got.status_code == head.status_code == 200
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["cache-control"] == got.headers["cache-control"] == "no-store"


def test_head_on_the_sign_in_pages_sends_no_body_over_the_wire(site) -> None:
    with served(create_app(site.settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        for path in SIGN_IN_PAGES:
            got = client.get(path)
            with client.stream("HEAD", path) as head:
                raw = b"".join(head.iter_raw())
            assert got.status_code == head.status_code == 200, path
            assert raw == b"", path
            assert head.headers["content-length"] == got.headers["content-length"], path
            assert head.headers["content-type"] == got.headers["content-type"], path


@pytest.mark.parametrize("path", SIGN_IN_PAGES)
def test_a_sign_in_post_without_its_token_is_still_refused(site, path: str) -> None:
    client = site.client
    client.cookies.clear()
    credentials = {"email": STAFF[0], "password": STAFF[1]}
    token = csrf_of(client.get(path).text)
    assert client.post(path, data=credentials, follow_redirects=False).status_code == 403
    assert client.post(path, data={**credentials, "csrf": token + "x"}, follow_redirects=False).status_code == 403
    client.cookies.clear()  # the token without the cookie it must repeat
    assert client.post(path, data={**credentials, "csrf": token}, follow_redirects=False).status_code == 403
    client.head(path)  # a HEAD sets the same cookie a GET does, and opens no session
    assert client.post(path, data=credentials, follow_redirects=False).status_code == 403
    assert not {"cib_staff", "cib_org"} & set(client.cookies.keys())
    client.cookies.clear()
