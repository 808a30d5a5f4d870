"""Recording a test checked by hand: a manual test of a consumer agent, or a real-agent test an agent builder
sent as a screen recording (with its version and date). An outcome per station tested, and the video, required.

The video goes to the blob store (mp4 or WebM, at most MAX_VIDEO_BYTES) in pieces, never whole in memory; the
type is checked on the bytes, not only on what the browser claims. One ManualTest event is recorded per station
tested, all naming the video. The outcomes follow the course's scoring: a trap station passes only with an order
that follows the brief.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from domain.courses.course import CURRENT_VERSION, load_course
from domain.eventlog.commands import RecordManualTest
from domain.eventlog.handlers import manual_tests_for, record_manual_test
from domain.leaderboards.manual_tests import KINDS, OUTCOMES, ManualTestError, parse_day
from web.site import Site
from web.staff.guard import render, staff_action, staff_page
from web.staff.session import Session
from web.uploads import UploadRule, store_upload

MAX_VIDEO_BYTES = 200 * 1024 * 1024
VIDEO_TYPES = {"video/mp4": "mp4", "video/webm": "webm"}


def video_kind(head: bytes) -> str | None:
    """mp4 has an ftyp box at byte 4; WebM starts with the EBML magic number."""
    if len(head) >= 12 and head[4:8] == b"ftyp":
        return "mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "webm"
    return None


async def _page(request: Request, session: Session, error: str | None = None, status: int = 200) -> Response:
    return render(request, "staff/manual.html", session, {
        "nav": "", "error": error, "done": request.query_params.get("done"), "course": load_course(CURRENT_VERSION),
        "outcomes": OUTCOMES, "kinds": KINDS, "today": datetime.now(UTC).date().isoformat(),
        "max_mb": MAX_VIDEO_BYTES // (1024 * 1024),
    }, status)


@staff_page
async def manual_form(request: Request, session: Session) -> Response:
    return await _page(request, session)


VIDEO = UploadRule(what="the video", max_bytes=MAX_VIDEO_BYTES, types=VIDEO_TYPES, kind_of=video_kind,
                   missing="add the video: a test checked by hand is published only with it",
                   wrong_content="the file's content is not the video type it claims to be")


async def _video(site: Site, upload: object) -> str:
    """The video into the blob store in pieces (web/uploads.py): a 200 MB file never sits in memory."""
    return await store_upload(site, upload, VIDEO, ManualTestError)


PENDING_VIDEO = "pending"
"""Stands for the video while the command is checked, so that a refused form stores no video."""


def _command(form: FormData, by: str) -> RecordManualTest:
    """The command as the form gives it, its video still to be stored."""
    course = load_course(CURRENT_VERSION)
    kind = str(form.get("kind", "manual"))
    if kind not in KINDS:
        raise ManualTestError(f"the kind is one of {', '.join(KINDS)}")
    outcomes = {c: str(form.get(f"outcome_{c}", "")) for c in course.codes}
    return RecordManualTest(
        agent_name=str(form.get("agent_name", "")).strip(), kind="real_agent" if kind == "real_agent" else "manual",
        agent_version=str(form.get("agent_version", "")).strip() or None,
        tested_on=parse_day(str(form.get("tested_on", ""))), outcomes={c: o for c, o in outcomes.items() if o},
        video=PENDING_VIDEO, notes=str(form.get("notes", "")), by=by, course_version=course.version,
    )


@staff_action(max_bytes=MAX_VIDEO_BYTES + 256 * 1024, max_files=1, max_fields=60)
async def record_manual(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    try:
        command = _command(form, session.email)
        manual_tests_for(site.runtime.record, command)  # the domain's checks, before the video is stored
        command = msgspec.structs.replace(command, video=await _video(site, form.get("video")))
        ids = await site.call(record_manual_test, site.runtime.record, command)
    except ManualTestError as error:
        return await _page(request, session, str(error), 400)
    await site.refresh()
    return RedirectResponse(f"/staff/manual?done={len(ids)}+stations+recorded", status_code=303)


routes = [
    Route("/manual", manual_form),
    Route("/manual", record_manual, methods=["POST"]),
]
