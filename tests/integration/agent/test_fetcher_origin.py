"""The reading station's fetcher reads its store's origin only: scheme, host and port compared, never the text of
the address, so a link with a user name before another host, or to a port whose number begins with the store's,
reaches nothing else; what it requests is the store's base with the link's path and query. Real HTTP servers on
loopback: a store whose page links elsewhere, and an internal service that must never be asked."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from adapters.fetcher import crawl_store, origin_of

pytestmark = pytest.mark.anyio


@dataclass
class Served:
    server: ThreadingHTTPServer
    paths: list[str] = field(default_factory=list)
    """Every request target the server was asked for, in order."""

    @property
    def port(self) -> int:
        return self.server.server_address[1]


def serve(port: int, page: bytes) -> Served:
    served: Served

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            served.paths.append(self.path)
            found = self.path.split("?")[0] in ("/", "/products/aero-run-2")
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    served = Served(ThreadingHTTPServer(("127.0.0.1", port), Handler))
    threading.Thread(target=served.server.serve_forever, daemon=True).start()
    return served


def free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture
def store_and_internal() -> Iterator[tuple[Served, Served]]:
    """A store on port P and an internal service on port 10P+1, whose address begins with the store's."""
    port = next(p for p in range(2000, 6500, 7) if free(p) and free(10 * p + 1))
    internal = serve(10 * port + 1, b"<p>INTERNAL-ONLY admin page</p>")
    links = [
        f"http://127.0.0.1:{port}@127.0.0.1:{internal.port}/admin",  # a user name, then the internal host
        f"http://127.0.0.1:{internal.port}/admin-by-prefix",  # 127.0.0.1:P1 begins with 127.0.0.1:P
        f"http://user:pw@127.0.0.1:{port}/products/aero-run-2?with=userinfo",  # our origin, but with a user name
        f"HTTP://127.0.0.1:{port}/products/aero-run-2?size=42",  # our origin, written in capitals
        "/products/aero-run-2?size=43#reviews",
    ]
    page = "".join(f'<a href="{link}">x</a>' for link in links).encode()
    store = serve(port, b"<html><body><p>Shop</p>" + page + b"</body></html>")
    try:
        yield store, internal
    finally:
        for served in (store, internal):
            served.server.shutdown()
            served.server.server_close()


async def test_links_to_other_origins_are_never_requested(store_and_internal: tuple[Served, Served]) -> None:
    store, internal = store_and_internal
    crawl = await crawl_store(f"http://127.0.0.1:{store.port}/", "Are the Aero Run 2 shoes in stock?")
    assert internal.paths == []
    assert not any("admin" in fetched.url or "@" in fetched.url for fetched in crawl.fetched)
    assert sorted(store.paths) == sorted(
        ["/", "/sitemap.xml", "/products/aero-run-2?size=42", "/products/aero-run-2?size=43"])
    assert all("INTERNAL" not in page.text for page in crawl.pages)


@pytest.mark.parametrize(("url", "origin"), [
    ("http://Shop.Example:80/a", ("http", "shop.example", 80)),
    ("https://shop.example/a?b", ("https", "shop.example", 443)),
    ("https://shop.example.evil.net/", ("https", "shop.example.evil.net", 443)),
    ("http://shop.example:8821@127.0.0.1:8822/admin", None),
    ("http://user@shop.example/", None),
    ("ftp://shop.example/", None),
    ("http://shop.example:99999/", None),
    ("http:///no-host", None),
])
def test_an_origin_is_scheme_host_and_port_normalised(url: str, origin: tuple[str, str, int] | None) -> None:
    assert origin_of(url) == origin
