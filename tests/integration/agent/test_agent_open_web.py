"""A real store's run (ARC's task off our lab) in real Chromium: its page loads scripts, styles, images and frames
from another public host, while the page itself stays on the store's own site, no request goes to a host that is
not public, and the agent's signature goes to the store only; a course run on the same pages stays confined to the
store's host. Two real HTTP servers stand for the store and a CDN; Chromium maps the `.test` names to them
(--host-resolver-rules), as DNS would map a real store's."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from adapters.botauth import BotAuthSigner
from adapters.browser.playwright_browser import PlaywrightBrowser
from domain.agent.actions import Click
from workers.executor import on_a_real_store

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]


@dataclass
class Server:
    """One real HTTP server; every request it gets is kept as (host, path, signed)."""

    page: str = ""
    hits: list[tuple[str, str, bool]] = field(default_factory=list)
    port: int = 0

    def seen(self, path: str) -> list[str]:
        """The hosts that asked for `path`."""
        return [host for host, asked, _ in self.hits if asked == path]


def serve(server: Server) -> Iterator[Server]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
            server.hits.append((host, self.path, "Signature" in self.headers))
            kind = {".css": "text/css", ".js": "text/javascript", ".png": "image/png"}
            body = server.page.encode() if self.path.startswith("/products/") else b"/* ok */"
            if self.path in ("/frame", "/cart", "/page"):
                body = f"<html><body><h1>{self.path}</h1></body></html>".encode()
            self.send_response(200)
            self.send_header(
                "Content-Type", next((t for end, t in kind.items() if self.path.endswith(end)), "text/html")
            )
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def cdn() -> Iterator[Server]:
    yield from serve(Server())


@pytest.fixture(scope="module")
def store(cdn: Server) -> Iterator[Server]:
    yield from serve(Server())


def product_page(shop: Server, cdn: Server) -> str:
    there = f"http://cdn.test:{cdn.port}"
    return f"""<html><head><title>Aero Run 2</title><link rel="stylesheet" href="{there}/style.css">
<script src="{there}/app.js"></script></head><body><h1>Aero Run 2</h1>
<img src="{there}/shoe.png" alt="shoe"><iframe src="{there}/frame"></iframe>
<img src="http://127.0.0.1:{cdn.port}/private.png" alt="loopback">
<img src="http://s01.lab.localhost:{cdn.port}/lab.png" alt="a lab station">
<a href="http://other.test:{cdn.port}/page">Elsewhere</a>
<a href="http://www.shop.test:{shop.port}/cart">Cart</a></body></html>"""


@pytest.fixture(scope="module")
async def chromium(signer: BotAuthSigner) -> AsyncIterator[PlaywrightBrowser]:
    async with PlaywrightBrowser(signer, switches=("--host-resolver-rules=MAP *.test 127.0.0.1",)) as browser:
        yield browser


async def visit(
    browser: PlaywrightBrowser, store: Server, cdn: Server, *, open_web: bool, click: str | None = None
) -> str:
    """Open the product page, wait for what it loads, click a link when asked; the address the page is on."""
    store.page = product_page(store, cdn)
    url = f"http://shop.test:{store.port}/products/aero-run-2"
    store.hits.clear()
    cdn.hits.clear()
    session = await browser.session(url, open_web=open_web)
    try:
        await session.open(url)
        seen = await session.observe()
        if click:
            await session.act(Click(id=next(e.id for e in seen.elements if e.name == click)), seen)
            seen = await session.observe()
        return seen.url
    finally:
        await session.close()


async def test_a_real_stores_page_loads_from_a_public_host_and_the_signature_stays_with_the_store(
    chromium: PlaywrightBrowser, store: Server, cdn: Server
) -> None:
    await visit(chromium, store, cdn, open_web=True)
    assert {path for _, path, _ in cdn.hits} >= {"/style.css", "/app.js", "/shoe.png", "/frame"}
    assert set(cdn.seen("/shoe.png")) == {"cdn.test"}
    assert not any(signed for *_, signed in cdn.hits)  # the signature names the store: never sent elsewhere
    assert store.seen("/products/aero-run-2") == ["shop.test"]
    assert all(signed for host, path, signed in store.hits if path.startswith("/products/"))
    # Hosts that are not public stay out of reach: a loopback address and a lab station's name.
    assert not cdn.seen("/private.png") and not cdn.seen("/lab.png")


async def test_a_real_stores_page_stays_on_the_stores_own_site(
    chromium: PlaywrightBrowser, store: Server, cdn: Server
) -> None:
    left = await visit(chromium, store, cdn, open_web=True, click="Elsewhere")
    assert not cdn.seen("/page") and "other.test" not in left  # a link to another site is not followed
    cart = await visit(chromium, store, cdn, open_web=True, click="Cart")
    assert cart == f"http://www.shop.test:{store.port}/cart" and store.seen("/cart") == ["www.shop.test"]


async def test_a_course_run_on_the_same_page_reaches_the_stores_host_only(
    chromium: PlaywrightBrowser, store: Server, cdn: Server
) -> None:
    await visit(chromium, store, cdn, open_web=False)
    assert store.seen("/products/aero-run-2") == ["shop.test"]
    assert cdn.hits == []  # every other host goes to a proxy that is not there


def test_only_arcs_task_off_a_lab_opens_the_web() -> None:
    assert on_a_real_store("arc", "https://www.apc.fr/en/products/cap", "lab.localhost")
    assert not on_a_real_store("arc", "http://s01.lab.localhost:8700/products/aero-run-2", "lab.localhost")
    assert not on_a_real_store("arc", "https://s01.lab.canitbuy.com/products/aero-run-2", "lab.example.org")
    assert not on_a_real_store("shop", "https://www.apc.fr/en/products/cap", "lab.localhost")
