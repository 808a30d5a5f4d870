"""Issue 15 item 7: generated bad input at every route, by machine (hypothesis).

The routes are read from the apps themselves (Starlette's route tables, mounts included), so a new route is covered
without a word here: every public page, the JSON API and the submission endpoints, the staff desk's forms (signed
in, with the session's CSRF token, so the handlers themselves are reached) and every route of the lab. Each request
has generated path parameters, query strings, headers and a body (bytes, JSON, form fields). The only answers
allowed are 2xx, 3xx and 4xx; never a 500, never a traceback; and a refused request (4xx) stores nothing: the
record's head and the blob store are as they were. The site runs on SQLite and on PostgreSQL (the `site` fixture).
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from desk_client import STAFF, csrf_of, sign_in
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import BaseRoute, Mount, Route

from lab.app import create_app as create_lab
from web.staff.session import COOKIE

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TRIED: dict[str, int] = {}
ANSWERS: Counter[int] = Counter()
EXAMPLES = settings(max_examples=120, deadline=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                           HealthCheck.data_too_large])
TEMPLATES = Path(__file__).resolve().parents[3] / "web" / "templates"
FIELDS = sorted(set(re.findall(r'name="([a-z_]+)', "".join(p.read_text() for p in TEMPLATES.rglob("*.html")))))
"""Every form field name the site's templates use, so generated forms reach the handlers' checks."""
HEADERS = ("accept", "accept-language", "content-type", "cookie", "user-agent", "x-forwarded-for", "range",
           "if-none-match", "origin", "referer", "hx-request", "signature", "signature-input", "signature-agent",
           "authorization")
CONTENT_TYPES = ("application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                 "text/plain", "multipart/form-data", "application/json; charset=utf-8")
NO_SIGN_OUT = re.compile(r"/sign-out$")


def routes_of(routes: Iterable[BaseRoute], prefix: str = "") -> Iterator[tuple[str, tuple[str, ...]]]:
    """(path template, methods) of every route, mounts walked; a mount of files gets a {path:path} route."""
    for route in routes:
        if isinstance(route, Route):
            yield prefix + route.path, tuple(sorted(route.methods or {"GET"}))
        elif isinstance(route, Mount):
            if route.routes:
                yield from routes_of(route.routes, prefix + route.path)
            else:
                yield prefix + route.path + "/{path:path}", ("GET", "HEAD")


printable = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)
words = st.one_of(st.text(max_size=30), printable, st.sampled_from(["", "0", "-1", "s01", "2026-W48", "9" * 30,
                                                                    "../../etc/passwd", "<script>", "%00", "null"]))


@st.composite
def requests(draw: st.DrawFn, routes: list[tuple[str, tuple[str, ...]]], csrf: str | None = None) -> dict[str, Any]:
    template, methods = draw(st.sampled_from(routes))
    method = draw(st.one_of(st.sampled_from(methods), st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"])))

    def param(match: re.Match[str]) -> str:
        value = draw(words)
        return quote(value, safe="/" if match.group(2) == ":path" else "")

    path = re.sub(r"\{(\w+)(:\w+)?\}", param, template)
    query = draw(st.one_of(st.just(""), st.lists(st.tuples(st.sampled_from(["page", "week", "q", "next", "done",
                                                                           "path", "colour", "size", "station"]),
                                                           words), max_size=4).map(urlencode),
                           printable.map(lambda q: quote(q, safe="=&"))))
    headers = draw(st.dictionaries(st.sampled_from(HEADERS), printable, max_size=4))
    if "content-type" not in headers and draw(st.booleans()):
        headers["content-type"] = draw(st.sampled_from(CONTENT_TYPES))
    fields = draw(st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.text(max_size=10)), words, max_size=6))
    if csrf is not None:
        fields["csrf"] = csrf
    body = draw(st.one_of(
        st.just(urlencode(fields).encode()),
        st.binary(max_size=300),
        st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | words,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(words, inner, max_size=4),
                     max_leaves=12).map(lambda value: json.dumps(value).encode()),
    ))
    if csrf is not None and method == "POST" and draw(st.booleans()):
        headers["content-type"] = "application/x-www-form-urlencoded"
        body = urlencode(fields).encode()
    return {"method": method, "url": f"{path}?{query}" if query else path, "headers": headers,
            "content": body if method not in ("GET", "HEAD") else None}


def assert_answered_well(answer: Any, request: dict[str, Any]) -> None:
    ANSWERS[answer.status_code] += 1
    assert answer.status_code < 500, (request, answer.status_code, answer.text[:500])
    assert "Traceback" not in answer.text and 'File "/' not in answer.text, (request, answer.text[:500])


def _stored(site: Any) -> tuple[int, int]:
    record = site.client.app.state.site.runtime.record
    blobs = site.settings.data_dir / "blobs"
    return record.head_position(), sum(1 for p in blobs.rglob("*") if p.is_file()) if blobs.exists() else 0


@pytest.fixture(scope="module", autouse=True)
def report_tried() -> Iterator[None]:
    yield
    answers = dict(sorted(ANSWERS.items()))
    print(f"\ngenerated requests tried: {TRIED} ({sum(TRIED.values())} in all); answers: {answers}")


def _site_routes(site: Any) -> list[tuple[str, tuple[str, ...]]]:
    return list(routes_of(site.client.app.routes))


def _send(client: Any, request: dict[str, Any]) -> Any:
    return client.request(request["method"], request["url"], headers=request["headers"],
                          content=request["content"], follow_redirects=False)


def test_no_route_of_the_site_answers_bad_input_with_a_500_or_stores_what_it_refuses(site: Any) -> None:
    routes = _site_routes(site)
    assert len(routes) > 40 and any(p.startswith("/staff/") for p, _ in routes)  # the table was read
    anonymous = TestClient(site.client.app, base_url="https://testserver", raise_server_exceptions=False)

    @EXAMPLES
    @given(request=requests(routes))
    def one(request: dict[str, Any]) -> None:
        TRIED["site, anonymous"] = TRIED.get("site, anonymous", 0) + 1
        before = _stored(site)
        answer = _send(anonymous, request)
        assert_answered_well(answer, request)
        if answer.status_code >= 400:
            assert _stored(site) == before, request

    one()


def test_the_staff_forms_signed_in_answer_bad_input_with_a_4xx_and_store_nothing_refused(site: Any) -> None:
    staff = TestClient(site.client.app, base_url="https://testserver", raise_server_exceptions=False)
    sign_in(staff, *STAFF)
    csrf = csrf_of(staff.get("/staff/").text)
    routes = [(p, m) for p, m in _site_routes(site) if p.startswith(("/staff/", "/org")) and not NO_SIGN_OUT.search(p)
              and p not in ("/staff/sign-in", "/org/sign-in")]
    assert any("POST" in m for _, m in routes)

    @EXAMPLES
    @given(request=requests(routes, csrf))
    def one(request: dict[str, Any]) -> None:
        TRIED["staff desk, signed in"] = TRIED.get("staff desk, signed in", 0) + 1
        before = _stored(site)
        answer = _send(staff, request)
        assert_answered_well(answer, request)
        if answer.status_code >= 400:
            assert _stored(site) == before, request
        assert staff.cookies.get(COOKIE), "the session must stay open (no sign-out is generated)"

    one()


@pytest.fixture(scope="module")
def lab_client() -> Iterator[TestClient]:
    with TestClient(create_lab(), base_url="http://lab.localhost", raise_server_exceptions=False) as client:
        yield client


def test_no_route_of_the_lab_answers_bad_input_with_a_500(lab_client: TestClient) -> None:
    routes = list(routes_of(lab_client.app.routes))  # type: ignore[attr-defined]
    hosts = st.one_of(st.sampled_from([f"s{n:02d}.lab.localhost" for n in range(1, 19)] + ["lab.localhost"]),
                      printable)

    @EXAMPLES
    @given(request=requests(routes), host=hosts)
    def one(request: dict[str, Any], host: str) -> None:
        TRIED["lab"] = TRIED.get("lab", 0) + 1
        lab_client.cookies.clear()
        answer = _send(lab_client, {**request, "headers": {**request["headers"], "host": host}})
        assert_answered_well(answer, request)

    one()
