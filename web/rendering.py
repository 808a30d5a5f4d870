"""Templates and the rendered-page cache.

Autoescaping makes a large table cost milliseconds per render, so public pages are rendered once per read-model
version and then served as bytes with an ETag until a new event touches them (DESIGN.md). Staff pages are
rendered per request: they carry a CSRF token and are few.
"""

from __future__ import annotations

import gzip
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

from domain.projections.statistics import percent_text

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
    """A share as a whole percentage, rounded half up from its exact value as every page prints one (0.125 is 13%,
    where `:.0f` gave 12)."""
    return "–" if value is None else f"{percent_text(value, 0)}%"


GZIP_LEVEL = 6
"""zlib's default: on the Matrix (30 kB) level 9 saves 1.5 % more bytes for 60 % more time, paid again at every
new log position; level 1 sends 10 % more bytes."""
GZIP_MIN = 512
"""Smaller bodies fit in one packet either way: they are sent as they are."""


class Page:
    """Rendered bytes with their strong ETag, and their gzip-compressed copy made once with them (bodies of
    GZIP_MIN bytes or more that compress), served to the clients that accept gzip: every browser does."""

    __slots__ = ("_raw", "body", "etag", "gzip_etag", "gzipped", "headers", "media_type")

    def __init__(self, body: bytes, media_type: str = HTML, headers: dict[str, str] | None = None) -> None:
        self.body = body
        self.media_type = media_type
        self.headers = headers or {}
        self.etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        self.gzipped = _gzip(body)
        """The compressed body, or None when the page is served as it is to everyone (then it has no Vary)."""
        self.gzip_etag = self.etag[:-1] + '-gzip"'
        """Each encoding is a representation of its own: its own strong validator."""
        self._raw: dict[tuple[int, bool, int], list[tuple[bytes, bytes]]] = {}

    def body_for(self, gzipped: bool) -> bytes:
        """The bytes sent: the compressed copy when asked for and there is one."""
        return self.gzipped if gzipped and self.gzipped is not None else self.body

    def raw_headers(self, max_age: int, gzipped: bool = False, status: int = 200) -> list[tuple[bytes, bytes]]:
        """The response's headers encoded once per (max-age, encoding, status), as Starlette would encode them on
        every request."""
        raw = self._raw.get((max_age, gzipped, status))
        if raw is None:
            raw = self._raw[max_age, gzipped, status] = self._encode(max_age, gzipped, status)
        return raw

    def _encode(self, max_age: int, gzipped: bool, status: int) -> list[tuple[bytes, bytes]]:
        headers = {k.lower(): v for k, v in self.headers.items()}
        headers["etag"] = self.gzip_etag if gzipped else self.etag
        headers["cache-control"] = f"public, max-age={max_age}"
        if self.gzipped is not None:  # caches keep one copy per encoding, a 304 included (RFC 9110 15.4.5)
            headers["vary"] = f"{headers['vary']}, Accept-Encoding" if "vary" in headers else "Accept-Encoding"
        if status != 304:
            if gzipped:
                headers["content-encoding"] = "gzip"
            headers.setdefault("content-length", str(len(self.body_for(gzipped))))
            media_type = self.media_type
            if media_type.startswith("text/") and "charset=" not in media_type.lower():
                media_type += "; charset=utf-8"
            headers.setdefault("content-type", media_type)
        return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


def _gzip(body: bytes) -> bytes | None:
    if len(body) < GZIP_MIN:
        return None
    # mtime=0: the same bytes in every process and at every render, so a cache's copy stays valid across them
    compressed = gzip.compress(body, GZIP_LEVEL, mtime=0)
    return compressed if len(compressed) < len(body) * 0.9 else None


class _PageResponse(Response):
    """A cached page's response: its headers were encoded when the page was first sent, not on every request."""

    def __init__(self, page: Page, max_age: int, gzipped: bool, status: int) -> None:  # noqa: D107 - Response.__init__ would encode again
        self.status_code, self.background = status, None
        self.body = b"" if status == 304 else page.body_for(gzipped)
        self.raw_headers = list(page.raw_headers(max_age, gzipped, status))


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
    """The page, gzip-compressed when the request accepts it, or 304 when the client already holds these bytes."""
    if status != 200:
        headers = {**page.headers, "ETag": page.etag, "Cache-Control": f"public, max-age={max_age}"}
        return Response(page.body, status_code=status, media_type=page.media_type, headers=headers)
    status, gzipped = negotiate(request.scope["headers"], page)
    return _PageResponse(page, max_age, gzipped, status)


def negotiate(raw: list[tuple[bytes, bytes]], page: Page) -> tuple[int, bool]:
    """Which of the page's answers a request with these headers gets: (200 or 304, gzip-compressed or not)."""
    if_none_match, accepts = _conditions(raw)
    gzipped = page.gzipped is not None and accepts is not None and accepts_gzip(accepts)
    if if_none_match is not None and _matches(if_none_match, page.gzip_etag if gzipped else page.etag):
        return 304, gzipped
    return 200, gzipped


def _conditions(raw: list[tuple[bytes, bytes]]) -> tuple[str | None, bytes | None]:
    """If-None-Match and Accept-Encoding read from the scope in one pass (cheaper than building Request.headers
    on the hot path); a header sent twice counts as one comma-separated list."""
    if_none_match = accept_encoding = None
    for key, value in raw:
        if key == b"if-none-match":
            text = value.decode("latin-1")
            if_none_match = text if if_none_match is None else f"{if_none_match},{text}"
        elif key == b"accept-encoding":
            accept_encoding = value if accept_encoding is None else accept_encoding + b"," + value
    return if_none_match, accept_encoding


_ACCEPTS: dict[bytes, bool] = {}
"""Accept-Encoding values already read: browsers send a handful of them, so each is parsed once."""


def accepts_gzip(header: bytes) -> bool:
    known = _ACCEPTS.get(header)
    if known is None:
        known = _prefers_gzip(header.decode("latin-1"))
        if len(header) <= 256:  # bounded: at most 256 short values are kept
            if len(_ACCEPTS) >= 256:
                _ACCEPTS.clear()
            _ACCEPTS[header] = known
    return known


def _prefers_gzip(header: str) -> bool:
    """Whether gzip is acceptable (q > 0, RFC 9110 12.5.3: a coding not listed takes `*`'s weight) and weighs at
    least as much as no encoding when the client weighs that (`identity;q=…` or `*`); a client that lists gzip
    and says nothing of identity gets gzip, as from every web server."""
    weights: dict[str, float] = {}
    for item in header.split(","):
        coding, _, params = item.partition(";")
        coding = coding.strip().lower()
        if not coding:
            continue
        weight = 1.0
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value.strip())
                except ValueError:
                    weight = 0.0
                if not 0.0 <= weight <= 1.0:  # NaN included
                    weight = 0.0
        weights.setdefault(coding, weight)
    star = weights.get("*")
    wanted = weights.get("gzip", weights.get("x-gzip", star if star is not None else 0.0))
    identity = weights.get("identity", star if star is not None else 0.0)
    return wanted > 0.0 and wanted >= identity


def _matches(header: str, etag: str) -> bool:
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return etag in tags or "*" in tags
