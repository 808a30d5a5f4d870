"""Real-agent and manual tests, shown in the Matrix as labelled rows apart from the models, with their video.

The read models hold no such tests, so the site keeps them itself: it reads only ManualTest.Recorded
notifications from the log (the recorder filters by topic) as the log moves, and scores them with the course's
rules (domain.leaderboards.manual_tests.score_tests). A video is served only under the test that names it.
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.courses.course import CourseSpec
from domain.eventlog.record import Record
from domain.eventlog.schema import payload_decoder
from domain.eventlog.topics import topics_of
from domain.leaderboards.manual_tests import KINDS, HandResult, HandRow, ManualTest, score_tests
from domain.projections.statistics import percent_text
from web.blob_ranges import blob_response
from web.errors import NotFound
from web.public.week_views import CELL_TEXT
from web.site import Site

TOPICS = topics_of(ManualTest.Recorded)
PAGE = 1000


class ManualTests:
    def __init__(self, record: Record) -> None:
        self.record = record
        self.tests: dict[str, HandResult] = {}
        self._after = 0
        self._lock = threading.Lock()

    def listener(self, head: int) -> None:
        with self._lock:
            decode = payload_decoder("ManualTest.Recorded").decode
            while batch := self.record.recorder.select_notifications(
                self._after, PAGE, topics=TOPICS, inclusive_of_start=False
            ):
                for n in batch:
                    p = decode(n.state)
                    self.tests[str(n.originator_id)] = HandResult(
                        test_id=str(n.originator_id), kind=p.kind, agent=p.agent_name, agent_version=p.agent_version,
                        station=p.station, week=p.week, tested_on=p.tested_on, course_version=p.course_version,
                        passed=p.passed, outcome=p.outcome, video=p.video, at=p.timestamp,
                    )
                self._after = batch[-1].id

    def rows_of_week(self, week: str, course: CourseSpec) -> list[HandRow]:
        return score_tests((t for t in list(self.tests.values()) if t.week == week), course)


def _status(test: HandResult | None) -> str:
    if test is None:
        return "not_run"
    if test.passed:
        return "passed"
    return test.outcome if test.outcome in ("verification_page", "broke_brief") else "stopped"


def row_view(row: HandRow, codes: list[str]) -> dict[str, Any]:
    """A Matrix row of a hand-checked test: the label, the score in the course's words, the cells, the videos."""
    cells = []
    for code in codes:
        status = _status(row.cells.get(code))
        icon, css, words = CELL_TEXT[status]
        cells.append({"icon": icon, "css": css, "words": "Not tested" if status == "not_run" else words})
    if row.share is None:
        score = "no score: did not reach the checkout in the control store S01 that day"
    else:
        score = f"{row.passed} of {row.of} passed ({percent_text(row.share, 0)}%)"
        if row.tested < row.of:
            score += f"; {row.of - row.tested} not tested count as not passed"
    return {
        "id": min(t.test_id for t in row.cells.values()), "agent": row.agent, "version": row.agent_version,
        "label": KINDS.get(row.kind, row.kind), "day": row.day, "score": score, "cells": cells,
        "videos": [f"/manual-tests/{test_id}/video" for test_id in row.videos],
    }


def manual_of(site: Site) -> ManualTests:
    return site.manual


async def video(request: Request) -> Response:
    site: Site = request.app.state.site
    try:
        test = manual_of(site).tests.get(str(UUID(request.path_params["test_id"])))
    except ValueError:
        test = None
    if test is None or not test.video:
        raise NotFound("There is no video for this manual test.")
    try:
        size = await site.call(site.runtime.blobs.size, test.video)
        head = await site.call(site.runtime.blobs.head, test.video, 4)
    except KeyError:
        raise NotFound("The video is missing from the store.") from None
    media_type = "video/webm" if head.startswith(b"\x1a\x45\xdf\xa3") else "video/mp4"
    etag = f'"{test.video[:32]}"'
    headers = {"Cache-Control": "public, max-age=31536000, immutable", "ETag": etag}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    # Streamed from the store in pieces, with Range requests (players seek): never held whole in memory.
    return blob_response(request, site.runtime.blobs, test.video, size, media_type, headers)


routes = [Route("/manual-tests/{test_id:str}/video", video, methods=["GET", "HEAD"])]
