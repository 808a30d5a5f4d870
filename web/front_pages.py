"""Public pages answered before the router, once a handler has made them for the log position the site is at.

A week's ranking and Matrix are the busiest pages, and between two events their bytes depend on the request's path
and query alone (the Accept-Encoding and If-None-Match it sends choose among the page's ready answers: `negotiate`).
So once the page's handler has answered a path and query, and said so (`FrontPages.remember`), the next request for
them is answered from here: past Starlette's exception handling, its router and the handler's request object,
which cost a cached page as much again as sending it (bench/PROFILE-site.md). The plain route and every other page
still take the router's way.

Only a handler whose page is a function of the path, the query and the log position may remember it: nothing of the
visitor (cookies, a staff session, the client's address) and nothing of the clock. When the log moves on
(`Site.refresh`), every page remembered goes; a handler that read the old position and remembers after that is
not believed. Everything runs on the event loop's thread, so the table needs no lock.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from web.rendering import Page, negotiate


@dataclass(frozen=True, slots=True)
class Remembered:
    page: Page
    max_age: int


class FrontPages:
    """The pages remembered for the current log position, by (path, raw query), the one remembered longest ago
    dropped past `capacity` (queries are the visitor's to vary; a page dropped is made again by its handler, from
    the page cache, at its next request)."""

    def __init__(self, capacity: int = 256) -> None:
        self._pages: OrderedDict[tuple[str, bytes], Remembered] = OrderedDict()
        self._capacity = capacity
        self.version = -1
        """The log position the pages are of (Site.refresh moves it)."""
        self.answered = 0
        """Requests answered from here (the tests read it)."""

    def remember(self, scope: Scope, page: Page, version: int, max_age: int) -> None:
        """`page` answers this request's path and query at log position `version`."""
        if version != self.version:  # made for a position the site has already left
            return
        key = (scope["path"], scope["query_string"])
        self._pages[key] = Remembered(page, max_age)
        self._pages.move_to_end(key)
        while len(self._pages) > self._capacity:
            self._pages.popitem(last=False)

    def moved(self, version: int) -> None:
        """The log is at `version` now: nothing remembered holds any longer."""
        if version != self.version:
            self._pages.clear()
            self.version = version

    def __len__(self) -> int:
        return len(self._pages)

    def lookup(self, scope: Scope) -> Remembered | None:
        return self._pages.get((scope["path"], scope["query_string"]))


class AnswerRemembered:
    """The middleware: a GET for a remembered path and query is answered at once, as the handler's `send` would
    answer it (gzip to clients that take it, 304 to one that holds the bytes); anything else goes on."""

    def __init__(self, app: ASGIApp, pages: FrontPages) -> None:
        self.app, self.pages = app, pages

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            remembered = self.pages.lookup(scope)
            if remembered is not None:
                self.pages.answered += 1
                page = remembered.page
                status, gzipped = negotiate(scope["headers"], page)
                await send({"type": "http.response.start", "status": status,
                            "headers": list(page.raw_headers(remembered.max_age, gzipped, status))})
                await send({"type": "http.response.body", "body": b"" if status == 304 else page.body_for(gzipped)})
                return
        await self.app(scope, receive, send)
