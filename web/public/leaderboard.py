"""The submissions table of outside agents: `/leaderboard` and `/api/leaderboard.json` (CC BY 4.0).

The site keeps the table itself: it reads only the LeaderboardSubmission notifications from the log (the recorder
filters by topic) as the log moves, and folds them with `domain.leaderboards.leaderboard.Book`, which never reads the
contact or the network key. Page and JSON are rendered once per log position and served with ETags.
"""

from __future__ import annotations

import threading
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from domain.eventlog.record import Record
from domain.eventlog.schema import NAME_TO_CLASS, Envelope, name_for_topic, payload_decoder
from domain.eventlog.topics import topics_of
from domain.leaderboards.arc import ARC_TEST_SET, COURSE_TEST_SET
from domain.leaderboards.leaderboard import CITATION, EVENTS, Book, document, entry_document
from domain.projections.statistics import arc_rate, tenths_text
from web.rendering import Page, send
from web.site import Site

TOPICS = [topic for name in EVENTS for topic in topics_of(NAME_TO_CLASS[name])]
PAGE = 1000
ROWS_A_PAGE = 50
"""Rows of each table on one page of /leaderboard (?page=2 for the next); the JSON holds every submission."""
JSON = "application/json"


class Board:
    def __init__(self, record: Record) -> None:
        self.record = record
        self.book = Book()
        self._after = 0
        self._lock = threading.Lock()

    def listener(self, head: int) -> None:
        with self._lock:
            while batch := self.record.recorder.select_notifications(
                self._after, PAGE, topics=TOPICS, inclusive_of_start=False
            ):
                for n in batch:
                    name = name_for_topic(n.topic)
                    payload = payload_decoder(name).decode(n.state)
                    self.book.apply(Envelope(n.id, str(n.originator_id), n.originator_version, name, payload))
                self._after = batch[-1].id

    def json(self) -> bytes:
        with self._lock:
            return document(self.book)

    def context(self, page: int = 1) -> dict[str, Any]:
        """One page of each table: the listing stays small however many runs are submitted."""
        start = (page - 1) * ROWS_A_PAGE
        with self._lock:
            found = {s: self.book.listed(s) for s in ("verified", "unverified", "rejected")}
            listed = {s: [_row(e) for e in rows[start:start + ROWS_A_PAGE]] for s, rows in found.items()}
        more = any(len(rows) > start + ROWS_A_PAGE for rows in found.values())
        return {"nav": "leaderboard", "listed": listed, "arc": ARC_TEST_SET, "course": COURSE_TEST_SET,
                "citation": CITATION, "page": page, "next_page": page + 1 if more else None,
                "counts": {s: len(rows) for s, rows in found.items()}}


def _row(entry: Any) -> dict[str, Any]:
    doc = entry_document(entry)
    doc["agent"] = {k: doc["agent"].get(k) for k in ("name", "version", "builder", "url", "path", "model")}
    # ARC's figures (percent to 0.1, z = 1.96), as its rows show them: domain.projections.statistics.arc_rate.
    figures = arc_rate(entry.successes, entry.n)
    doc["percent"], doc["low"], doc["high"] = (
        (tenths_text(figures.rate), tenths_text(figures.low), tenths_text(figures.high)) if figures else ("–",) * 3)
    return doc


async def start(site: Site) -> Board:
    board = Board(site.runtime.record)
    site.board = board
    site.listeners.append(board.listener)
    await site.call(board.listener, 0)
    return board


def board_of(site: Site) -> Board:
    return site.board


async def leaderboard_page(request: Request) -> Response:
    site: Site = request.app.state.site
    number = request.query_params.get("page", "1")
    if not (number.isascii() and number.isdigit()) or not 1 <= int(number) <= 10_000:
        return RedirectResponse("/leaderboard", status_code=303)
    key = ("leaderboard", site.version, int(number))
    page = site.cache.get(key)
    if page is None:
        context = await site.call(board_of(site).context, int(number))
        page = site.cache.put(key, await site.call(site.renderer.page, "leaderboard.html", context))
    return send(request, page, max_age=30)


async def leaderboard_json(request: Request) -> Response:
    site: Site = request.app.state.site
    key = ("leaderboard.json", site.version)
    page = site.cache.get(key) or site.cache.put(key, Page(await site.call(board_of(site).json), JSON))
    response = send(request, page, max_age=30)
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


async def leaderboard_spec(request: Request) -> Response:
    """ARC's messages point at /leaderboard/spec ("Send a JSON object. See /leaderboard/spec."): ours leads to the
    format on the leaderboard page, so the same words lead somewhere here too."""
    return RedirectResponse("/leaderboard#submit", status_code=302)


routes = [Route("/leaderboard", leaderboard_page), Route("/leaderboard/spec", leaderboard_spec),
          Route("/api/leaderboard.json", leaderboard_json)]
