"""Manual tests of consumer agents, shown beside the Matrix, labelled as such, with their video.

The read models hold no manual tests, so the site keeps them itself: it reads only ManualTest.Recorded
notifications from the log (the recorder filters by topic) as the log moves. A video is served only under the
manual test that names it.
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from domain.manual_tests import ManualTest
from domain.record import Record
from domain.schema import payload_decoder
from web.errors import NotFound
from web.site import Site

TOPIC = get_topic(ManualTest.Recorded)
PAGE = 1000


class ManualTests:
    def __init__(self, record: Record) -> None:
        self.record = record
        self.tests: dict[str, dict[str, Any]] = {}
        self._after = 0
        self._lock = threading.Lock()

    def listener(self, head: int) -> None:
        with self._lock:
            decode = payload_decoder("ManualTest.Recorded").decode
            while batch := self.record.recorder.select_notifications(
                self._after, PAGE, topics=[TOPIC], inclusive_of_start=False
            ):
                for n in batch:
                    p = decode(n.state)
                    self.tests[str(n.originator_id)] = {
                        "id": str(n.originator_id), "agent": p.agent_name, "station": p.station, "week": p.week,
                        "passed": p.passed, "outcome": p.outcome, "video": p.video, "notes": p.notes,
                        "at": p.timestamp,
                    }
                self._after = batch[-1].id

    def of_week(self, week: str) -> list[dict[str, Any]]:
        return sorted((t for t in self.tests.values() if t["week"] == week), key=lambda t: (t["agent"], t["station"]))


def manual_of(site: Site) -> ManualTests:
    return site.services["manual"]  # type: ignore[no-any-return]


async def video(request: Request) -> Response:
    site: Site = request.app.state.site
    try:
        test = manual_of(site).tests.get(str(UUID(request.path_params["test_id"])))
    except ValueError:
        test = None
    if test is None or not test["video"]:
        raise NotFound("There is no video for this manual test.")
    try:
        path = await site.call(site.runtime.blobs.file, test["video"])
        head = await site.call(site.runtime.blobs.head, test["video"], 4)
    except KeyError:
        raise NotFound("The video is missing from the store.") from None
    media_type = "video/webm" if head.startswith(b"\x1a\x45\xdf\xa3") else "video/mp4"
    # Streamed from disk in pieces, with Range requests (players seek): a video is never held whole in memory.
    return FileResponse(path, media_type=media_type, headers={"Cache-Control": "public, max-age=31536000, immutable",
                                                              "ETag": f'"{test["video"][:32]}"'})


routes = [Route("/manual-tests/{test_id:str}/video", video)]
