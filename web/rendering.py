"""Templates and the rendered-page cache.

Autoescaping makes a large table cost milliseconds per render, so public pages are rendered once per read-model
version and then served as bytes with an ETag until a new event touches them (DESIGN.md). Staff pages are
rendered per request: they carry a CSRF token and are few.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import Response

TEMPLATES = Path(__file__).parent / "templates"
HTML = "text/html; charset=utf-8"


def make_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["percent"] = _percent
    return env


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "–"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


class Page:
    """Rendered bytes with their strong ETag."""

    __slots__ = ("_raw", "body", "etag", "headers", "media_type")

    def __init__(self, body: bytes, media_type: str = HTML, headers: dict[str, str] | None = None) -> None:
        self.body = body
        self.media_type = media_type
        self.headers = headers or {}
        self.etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        self._raw: dict[int, list[tuple[bytes, bytes]]] = {}

    def raw_headers(self, max_age: int) -> list[tuple[bytes, bytes]]:
        """The response's headers encoded once per max-age, as Starlette would encode them on every request."""
        raw = self._raw.get(max_age)
        if raw is None:
            headers = {**self.headers, "ETag": self.etag, "Cache-Control": f"public, max-age={max_age}"}
            raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
            keys = {k for k, _ in raw}
            if b"content-length" not in keys:
                raw.append((b"content-length", str(len(self.body)).encode("latin-1")))
            media_type = self.media_type
            if media_type.startswith("text/") and "charset=" not in media_type.lower():
                media_type += "; charset=utf-8"
            if b"content-type" not in keys:
                raw.append((b"content-type", media_type.encode("latin-1")))
            self._raw[max_age] = raw
        return raw


class _PageResponse(Response):
    """A cached page's response: its headers were encoded when the page was first sent, not on every request."""

    def __init__(self, page: Page, max_age: int) -> None:  # noqa: D107 - Response.__init__ would encode again
        self.status_code, self.body, self.background = 200, page.body, None
        self.raw_headers = list(page.raw_headers(max_age))


class PageCache:
    """Pages keyed by (what, version). A new version simply misses; old entries age out (LRU)."""

    def __init__(self, capacity: int = 512) -> None:
        self._pages: OrderedDict[Hashable, Page] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Page | None:
        with self._lock:
            page = self._pages.get(key)
            if page is not None:
                self._pages.move_to_end(key)
            return page

    def put(self, key: Hashable, page: Page) -> Page:
        with self._lock:
            self._pages[key] = page
            self._pages.move_to_end(key)
            while len(self._pages) > self._capacity:
                self._pages.popitem(last=False)
        return page

    def get_or_make(self, key: Hashable, make: Callable[[], Page]) -> Page:
        page = self.get(key)
        return page if page is not None else self.put(key, make())


class Renderer:
    def __init__(self, env: jinja2.Environment, globals_: dict[str, Any]) -> None:
        self.env = env
        self.env.globals.update(globals_)

    def html(self, template: str, context: dict[str, Any]) -> bytes:
        # A copy: the caller's dict may be cached or shared between renders.
        return self.env.get_template(template).render(dict(context)).encode()

    def page(self, template: str, context: dict[str, Any]) -> Page:
        return Page(self.html(template, context))


def send(request: Request, page: Page, *, status: int = 200, max_age: int = 60) -> Response:
    """The page, or 304 when the client already holds these bytes."""
    if status == 200:
        if not _matches(_if_none_match(request.scope["headers"]), page.etag):
            return _PageResponse(page, max_age)
        status = 304
    headers = {**page.headers, "ETag": page.etag, "Cache-Control": f"public, max-age={max_age}"}
    if status == 304:
        return Response(status_code=304, headers=headers)
    return Response(page.body, status_code=status, media_type=page.media_type, headers=headers)


def _if_none_match(raw: list[tuple[bytes, bytes]]) -> str | None:
    """The If-None-Match header read from the scope (cheaper than building Request.headers on the hot path)."""
    for key, value in raw:
        if key == b"if-none-match":
            return value.decode("latin-1")
    return None


def _matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return etag in tags or "*" in tags
