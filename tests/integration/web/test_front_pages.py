"""A week's ranking and Matrix, once made for the log position the site is at, are answered before the router: the
same bytes and headers the handler sends, chosen per request (gzip, 304, the security headers, HSTS behind a
proxy that says https), and never a page of an earlier position once the log has moved. The site runs in uvicorn
on a free port; another process's writes reach it through the shared SQLite record."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from site_data import behind_local_proxy_with_a_week, run_one

from adapters.settings import Settings
from adapters.wiring import build_runtime
from tests.e2e.web.served import served as served_app
from web.app import create_app
from web.front_pages import FrontPages
from web.rendering import Page
from web.site import Site

BROWSER = "gzip, deflate, br"
PAGES = ("/ranking", "/matrix")


@dataclass
class Served:
    url: str
    week: str
    settings: Settings
    site: Site

    def get(self, path: str, **headers: str) -> httpx.Response:
        with httpx.Client(base_url=self.url, timeout=60) as client:
            del client.headers["accept-encoding"]
            return client.get(path, headers=headers)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    settings, week = behind_local_proxy_with_a_week(tmp_path_factory.mktemp("front") / "var")
    app = create_app(settings)
    with served_app(app) as url:
        yield Served(url, week, settings, app.state.site)


def without_date(response: httpx.Response) -> list[tuple[str, str]]:
    return [(k, v) for k, v in response.headers.multi_items() if k != "date"]


@pytest.mark.parametrize("path", [*PAGES, "/matrix?week={week}"])
@pytest.mark.parametrize("accept_encoding", ["", BROWSER])
def test_the_second_request_is_answered_before_the_router_with_the_handlers_bytes(
        served: Served, path: str, accept_encoding: str) -> None:
    path = path.format(week=served.week)
    made = served.get(path, **{"accept-encoding": accept_encoding})
    answered = served.site.front.answered
    again = served.get(path, **{"accept-encoding": accept_encoding})
    assert made.status_code == again.status_code == 200
    assert served.site.front.answered == answered + 1
    assert again.content == made.content and without_date(again) == without_date(made)
    assert again.headers["content-security-policy"].startswith("default-src 'self'")
    assert (again.headers.get("content-encoding") == "gzip") == (accept_encoding == BROWSER)
    held = served.get(path, **{"accept-encoding": accept_encoding, "if-none-match": made.headers["etag"]})
    assert held.status_code == 304 and held.content == b"" and held.headers["etag"] == made.headers["etag"]
    assert served.site.front.answered == answered + 2


def test_behind_a_proxy_that_says_https_the_remembered_page_carries_hsts(served: Served) -> None:
    served.get("/ranking")
    answered = served.site.front.answered
    secure = served.get("/ranking", **{"x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.9"})
    plain = served.get("/ranking")
    assert served.site.front.answered == answered + 2
    assert secure.headers["strict-transport-security"].startswith("max-age=")
    assert "strict-transport-security" not in plain.headers


def test_a_malformed_or_unknown_week_is_refused_each_time_and_never_remembered(served: Served) -> None:
    answered = served.site.front.answered
    for path in ("/matrix?week=garbage", "/matrix?week=garbage", "/ranking?week=1999-W01", "/ranking?week=1999-W01"):
        assert served.get(path).status_code in (400, 404), path
    assert served.site.front.answered == answered


def test_once_the_log_moves_the_next_request_gets_the_new_page_from_its_handler(served: Served) -> None:
    served.get("/matrix")
    before = served.get("/matrix")
    assert "model-zeta" not in before.text
    position = served.site.version
    with build_runtime(served.settings) as runtime:  # another process's write, through the shared record
        run_one(runtime, "model-zeta", "s01", served.week)
    deadline = time.monotonic() + 30
    while served.site.version == position:
        assert time.monotonic() < deadline, "the site did not see the new events"
        time.sleep(0.1)
    answered = served.site.front.answered
    after = served.get("/matrix")
    assert served.site.front.answered == answered  # made again by the handler, not the page remembered before
    assert "model-zeta" in after.text and after.headers["etag"] != before.headers["etag"]
    assert served.get("/matrix").content == after.content and served.site.front.answered == answered + 1


def test_a_page_made_for_a_position_already_left_is_not_remembered_and_the_table_stays_bounded() -> None:
    pages = FrontPages(capacity=8)
    pages.moved(5)
    page = Page(b"<p>week</p>" * 100)
    pages.remember({"path": "/ranking", "query_string": b""}, page, version=4, max_age=30)
    assert pages.lookup({"path": "/ranking", "query_string": b""}) is None
    for n in range(20):
        pages.remember({"path": "/ranking", "query_string": f"x={n}".encode()}, page, version=5, max_age=30)
    assert len(pages) == 8 and pages.lookup({"path": "/ranking", "query_string": b"x=19"}) is not None
    assert pages.lookup({"path": "/ranking", "query_string": b"x=0"}) is None
    pages.moved(6)
    assert len(pages) == 0
