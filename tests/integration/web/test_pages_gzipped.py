"""Cached pages, JSON documents and static files as a browser asks for them: gzip-compressed once per page version
and sent to the clients whose Accept-Encoding takes gzip, the same bytes as they are to everyone else; each encoding
with its own ETag and 304, `Vary: Accept-Encoding` on both, HEAD telling the length of what GET would send. The
site runs in uvicorn on a free port; the client reads the bytes as they came over the wire."""

from __future__ import annotations

import gzip
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from desk_client import STAFF
from site_data import behind_local_proxy_with_a_week

from adapters.sqldb import SqlDb
from adapters.staff_accounts import StaffAccounts
from tests.e2e.web.served import served as served_app
from web.app import create_app

BROWSER = "gzip, deflate, br"


@dataclass
class Served:
    url: str
    week: str

    def paths(self) -> list[str]:
        return ["/ranking", "/matrix", f"/matrix?week={self.week}", f"/api/ranking.json?week={self.week}",
                "/static/site.css", "/static/htmx.min.js"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    settings, week = behind_local_proxy_with_a_week(tmp_path_factory.mktemp("gzipped") / "var")
    accounts = StaffAccounts(SqlDb(settings))
    accounts.db.migrate()
    accounts.add(*STAFF, role="staff")
    with served_app(create_app(settings)) as url:
        yield Served(url, week)


@dataclass
class Wire:
    """An answer as it came: status, headers and the body's bytes before any decoding."""

    status: int
    headers: httpx.Headers
    raw: bytes


def fetch(served: Served, path: str, accept_encoding: str | None = None, method: str = "GET",
          **headers: str) -> Wire:
    with httpx.Client(base_url=served.url, timeout=60) as client:
        del client.headers["accept-encoding"]  # httpx asks for gzip by default: only what each test says is sent
        if accept_encoding is not None:
            headers["accept-encoding"] = accept_encoding
        with client.stream(method, path, headers=headers) as response:
            return Wire(response.status_code, response.headers, b"".join(response.iter_raw()))


def test_a_browser_gets_each_page_gzipped_and_it_decodes_to_exactly_the_bytes_sent_to_everyone_else(served) -> None:
    for path in served.paths():
        plain, packed = fetch(served, path), fetch(served, path, BROWSER)
        assert plain.status == packed.status == 200, path
        assert "content-encoding" not in plain.headers and int(plain.headers["content-length"]) == len(plain.raw)
        assert packed.headers["content-encoding"] == "gzip", path
        assert int(packed.headers["content-length"]) == len(packed.raw) < len(plain.raw) // 2, path
        assert gzip.decompress(packed.raw) == plain.raw, path
        assert plain.headers["vary"] == packed.headers["vary"] == "Accept-Encoding", path
        assert plain.headers["content-type"] == packed.headers["content-type"], path
        assert plain.headers["cache-control"] == packed.headers["cache-control"], path
        assert packed.headers["etag"] != plain.headers["etag"], path
        for wire in (plain, packed):  # the security headers on both
            assert wire.headers["x-frame-options"] == "DENY" and wire.headers["x-content-type-options"] == "nosniff"
            assert "frame-ancestors 'none'" in wire.headers["content-security-policy"]
    assert fetch(served, served.paths()[3], BROWSER).headers["access-control-allow-origin"] == "*"


@pytest.mark.parametrize("accept_encoding", [
    "gzip;q=0", "gzip; q=0.000, br", "br", "deflate, br, zstd", "identity", "", "*;q=0, identity",
    "gzip;q=0.5, identity", "gzip;q=nonsense", "gzip;q=2",
])
def test_a_client_that_refuses_gzip_or_prefers_none_gets_the_bytes_as_they_are(served, accept_encoding) -> None:
    plain = fetch(served, "/matrix")
    answer = fetch(served, "/matrix", accept_encoding)
    assert "content-encoding" not in answer.headers and answer.raw == plain.raw
    assert answer.headers["etag"] == plain.headers["etag"] and answer.headers["vary"] == "Accept-Encoding"


@pytest.mark.parametrize("accept_encoding", [
    "gzip", "GZIP", "br;q=1.0, gzip;q=0.8", "x-gzip", "*", "gzip;q=0.5, identity;q=0.5", "identity;q=0, *;q=0.1",
])
def test_a_client_that_takes_gzip_gets_it(served, accept_encoding) -> None:
    answer = fetch(served, "/matrix", accept_encoding)
    assert answer.headers["content-encoding"] == "gzip"
    assert gzip.decompress(answer.raw) == fetch(served, "/matrix").raw


def test_each_encoding_has_its_own_etag_and_a_304_answers_to_it_only(served) -> None:
    path = served.paths()[2]
    plain, packed = fetch(served, path), fetch(served, path, BROWSER)
    plain_tag, packed_tag = plain.headers["etag"], packed.headers["etag"]
    assert packed_tag == plain_tag[:-1] + '-gzip"'

    again = fetch(served, path, BROWSER, **{"if-none-match": packed_tag})
    assert again.status == 304 and again.raw == b"" and again.headers["etag"] == packed_tag
    assert again.headers["vary"] == "Accept-Encoding" and again.headers["cache-control"] == "public, max-age=30"
    assert "content-encoding" not in again.headers and again.headers["x-frame-options"] == "DENY"
    again = fetch(served, path, None, **{"if-none-match": plain_tag})
    assert again.status == 304 and again.headers["etag"] == plain_tag

    # A validator of the other encoding does not match: the client gets the bytes it asked for, whole.
    crossed = fetch(served, path, None, **{"if-none-match": packed_tag})
    assert crossed.status == 200 and crossed.raw == plain.raw
    crossed = fetch(served, path, BROWSER, **{"if-none-match": plain_tag})
    assert crossed.status == 200 and crossed.raw == packed.raw
    # A cache holding both sends both, weak or strong: whichever encoding is asked for, it is not sent again.
    both = f'W/{plain_tag}, {packed_tag}'
    assert fetch(served, path, BROWSER, **{"if-none-match": both}).status == 304
    assert fetch(served, path, None, **{"if-none-match": both}).status == 304


def test_head_tells_the_length_and_encoding_get_would_send(served) -> None:
    for path in served.paths():
        for accept_encoding in (None, BROWSER):
            got, head = fetch(served, path, accept_encoding), fetch(served, path, accept_encoding, method="HEAD")
            assert head.status == 200 and head.raw == b"", path
            for name in ("content-length", "content-type", "etag", "vary", "cache-control"):
                assert head.headers[name] == got.headers[name], (path, name)
            assert head.headers.get("content-encoding") == got.headers.get("content-encoding"), path


def test_the_staff_desk_is_never_stored_by_a_shared_cache_whatever_the_client_accepts(served) -> None:
    token = secrets.token_urlsafe(16)
    with httpx.Client(base_url=served.url, timeout=60) as client:
        signed_in = client.post("/staff/sign-in", data={"csrf": token, "email": STAFF[0], "password": STAFF[1]},
                                headers={"cookie": f"cib_sign_in={token}", "x-forwarded-proto": "https"},
                                follow_redirects=False)
        assert signed_in.status_code == 303, signed_in.text
        cookie = {"cookie": f"cib_staff={signed_in.cookies['cib_staff']}", "x-forwarded-proto": "https"}
    for path in ("/staff/matrix", "/staff/ranking"):
        desk = fetch(served, f"{path}?week={served.week}", BROWSER, **cookie)
        assert desk.status == 200 and desk.headers["cache-control"] == "no-store", path
        assert "etag" not in desk.headers and b"Back to the desk" in gzip_or_plain(desk), path


def gzip_or_plain(wire: Wire) -> bytes:
    return gzip.decompress(wire.raw) if wire.headers.get("content-encoding") == "gzip" else wire.raw


def test_unknown_static_names_and_paths_out_of_the_folder_are_not_found(served) -> None:
    for path in ("/static/nothing.css", "/static/%2e%2e/app.py", "/static/..%2fapp.py", "/static/"):
        assert fetch(served, path, BROWSER).status == 404, path
