"""Digits that are not ASCII ('²', '①', '٣': str.isdigit() holds for all three, int() takes only the last) are a
malformed number at every public page, JSON document and staff form: the same clear 4xx or redirect a value such
as "abc" gets there, never a 500. Requests go through the real app (the `site` fixture, on SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from desk_client import STAFF, csrf_of, sign_in, sign_out

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

NOT_ASCII = ["²", "①", "٣", "1²", "𝟙"]
"""Superscript two and circled one (int() raises on them), Arabic-Indic three and mathematical bold one (int()
reads them as 3 and 1): none is a number a URL or a form of this site means."""


def test_a_leaderboard_page_number_in_other_digits_is_redirected_like_any_malformed_one(site) -> None:
    malformed = site.client.get("/leaderboard?page=x", follow_redirects=False)
    assert malformed.status_code == 303
    for digits in NOT_ASCII:
        answer = site.client.get(f"/leaderboard?page={quote(digits)}", follow_redirects=False)
        assert answer.status_code == malformed.status_code, digits
        assert answer.headers["location"] == malformed.headers["location"] == "/leaderboard"
    assert site.client.get("/leaderboard?page=1").status_code == 200


@pytest.mark.parametrize("kind", ["ranking", "matrix"])
def test_a_publication_number_in_other_digits_is_a_400_like_any_malformed_one(site, kind: str) -> None:
    malformed = site.client.get(f"/api/{kind}.json?publication=abc")
    assert malformed.status_code == 400
    for digits in NOT_ASCII:
        answer = site.client.get(f"/api/{kind}.json?publication={quote(digits)}")
        assert answer.status_code == 400, digits
        assert answer.text == malformed.text
    assert site.client.get(f"/api/{kind}.json?publication=1").status_code == 200


@dataclass
class Answer:
    status: int
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()


def raw_post(client: TestClient, path: str, body: bytes, headers: dict[str, bytes]) -> Answer:
    """A POST handed to the running app as an ASGI server hands it: header bytes exactly as given. (TestClient
    re-encodes header text as UTF-8, so a lone latin-1 byte such as b"\xb2", '²' to Starlette, never reaches the
    app through it; uvicorn refuses such a Content-Length itself, other servers and proxies need not.)"""
    cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
    raw_headers = [(b"host", b"testserver"), *((k.encode(), v) for k, v in headers.items())]
    if cookie:
        raw_headers.append((b"cookie", cookie.encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "path": path,
             "raw_path": path.encode(), "root_path": "", "scheme": "https", "query_string": b"",
             "headers": raw_headers, "client": ("203.0.113.9", 50000), "server": ("testserver", 443),
             "state": {}}

    async def run() -> Answer:
        pending = [{"type": "http.request", "body": body, "more_body": False}]
        status, chunks = 0, []

        async def receive() -> dict[str, Any]:
            if pending:
                return pending.pop()
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await client.app(scope, receive, send)
        return Answer(status, b"".join(chunks))

    assert client.portal is not None, "the site's TestClient runs the app's lifespan"
    return client.portal.call(run)


LATIN_1_DIGITS = ["²".encode("latin-1"), "³".encode("latin-1"), "¹".encode("latin-1")]
"""The digits a latin-1 header byte can be that str.isdigit() takes and int() does not."""


def test_a_submission_whose_length_is_in_other_digits_is_read_like_one_with_a_malformed_length(site) -> None:
    def submit(length: bytes) -> Answer:
        return raw_post(site.client, "/api/leaderboard/submit", b"{}",
                        {"content-type": b"application/json", "content-length": length})

    malformed = submit(b"abc")
    assert 400 <= malformed.status < 500
    for length in LATIN_1_DIGITS:
        answer = submit(length)
        assert answer.status == malformed.status, length
        assert json.loads(answer.body)["error"] == json.loads(malformed.body)["error"]


def test_a_staff_form_whose_length_is_in_other_digits_is_refused_like_one_with_a_malformed_length(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    try:
        token = csrf_of(client.get("/staff/operations").text)

        def post(length: bytes) -> Answer:
            return raw_post(client, "/staff/operations/schedule", f"csrf={token}&what=runs".encode(), {
                "content-type": b"application/x-www-form-urlencoded", "content-length": length})

        malformed = post(b"abc")
        assert malformed.status == 403 and "Content-Length" in malformed.text
        for length in LATIN_1_DIGITS:
            answer = post(length)
            assert answer.status == 403, length
            assert "Content-Length" in answer.text
    finally:
        sign_out(client)


def test_repeats_in_other_digits_are_refused_like_any_malformed_number_and_schedule_nothing(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    try:
        token = csrf_of(client.get("/staff/operations").text)
        waiting = client.get("/live/rows").text.count("waiting</td>")

        def schedule(repeats: str) -> httpx.Response:
            return client.post("/staff/operations/schedule", data={
                "csrf": token, "what": "runs", "model": "baseline-robust", "week": site.week.week, "repeats": repeats,
                "station": ["s01"]}, follow_redirects=False)

        malformed = schedule("abc")
        assert malformed.status_code == 400 and "repeats must be a whole number" in malformed.text
        for digits in NOT_ASCII:
            answer = schedule(digits)
            assert answer.status_code == 400, digits
            assert "repeats must be a whole number" in answer.text
        assert client.get("/live/rows").text.count("waiting</td>") == waiting
    finally:
        sign_out(client)
