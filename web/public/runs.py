"""A run's recording page, and the blobs (screenshots, element lists) of public runs.

A blob is served only under the run that references it, after the run was found public: a digest alone opens
nothing, so a private test's screenshots cannot be fetched by guessing or by reusing a digest.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.agent.agent_ports import CUT_RESULT, READ_CUT_RESULT
from domain.courses.course import UnknownCourseError, load_course
from domain.courses.tasks import shopper_brief, task_text
from domain.leaderboards.arc_judge import ARC_TASK
from domain.projections.logs import CorrectionsLog
from web.blob_ranges import blob_response
from web.errors import NotFound, ServiceUnavailable
from web.public.attempts_views import run_attempts
from web.public.recording import (
    STREAMED,
    TRACE_TYPE,
    VIDEO_TYPE,
    ExchangeView,
    NotPublic,
    Recording,
    action_text,
    exchange_view,
    load_recording,
    parse_run_id,
)
from web.public.results import data_of
from web.public.week_views import OUTCOME_WORDS
from web.rendering import Page, send
from web.site import Site
from web.videos import NoVideoEncoder, VideoNotMade

MAX_ELEMENTS_SHOWN = 300
CUT_RESULTS = frozenset({CUT_RESULT, READ_CUT_RESULT})
"""A step whose reply our token limit cut: the run was cut short there (our error), the call recorded for its cost."""
CUT_ACTION = "none: our token limit cut the reply"
"""Such a step's action, where 'no valid action' would blame the model."""


async def recording_of(site: Site, raw_id: str) -> Recording:
    run_id = parse_run_id(raw_id)
    if run_id is None:
        raise NotFound(f"{raw_id!r} is not a run id; run ids look like 3f2b…-… (a UUID).")
    try:
        return await site.call(load_recording, site.runtime.record, run_id)
    except NotPublic:
        raise NotFound(f"There is no public run {run_id}.") from None


def _elements(site: Site, digest: str | None) -> list[dict[str, Any]] | None:
    if not digest or not site.runtime.blobs.has(digest):
        return None
    try:
        items = msgspec.json.decode(site.runtime.blobs.get(digest))
    except msgspec.DecodeError:
        return None
    return items[:MAX_ELEMENTS_SHOWN] if isinstance(items, list) else None


def _exchange(site: Site, digest: str | None) -> ExchangeView | None:
    if not digest or not site.runtime.blobs.has(digest):
        return None
    return exchange_view(site.runtime.blobs.get(digest))


def render_recording(site: Site, recording: Recording, blob_base: str = "/runs/",
                     extra: dict[str, Any] | None = None) -> Page:
    run, verdict = recording.run, recording.verdict
    try:
        course = load_course(run.course_version)
        station = course.station(run.station)
        task, brief = task_text(course, run.task), shopper_brief(course) if run.task == "shop_brief" else None
    except (UnknownCourseError, KeyError):
        course, station, task, brief = None, None, "", None
    if run.task == "arc":  # ARC's task names its product; the first step was observed on that product's page
        task = ARC_TASK.format(product_url=recording.steps[0].url if recording.steps else "(the product page)")
    corrections = [
        c for c in msgspec.json.decode(data_of(site).readmodels.corrections(), type=CorrectionsLog).corrections
        if c.run_id == run.id
    ]
    steps = [
        {"step": s, "action": CUT_ACTION if s.result in CUT_RESULTS else action_text(s.action),
         "elements": _elements(site, s.elements), "exchange": _exchange(site, s.exchange),
         "ends": verdict is not None and verdict.step == s.number,
         "cut": run.status == "cut_short" and s.result in CUT_RESULTS}
        for s in recording.steps
    ]
    return site.renderer.page("run.html", {
        "nav": "matrix", "run": run, "verdict": verdict, "steps": steps, "station": station, "task": task,
        "brief": brief,
        "stage_name": course.stage_name(verdict.stage) if course and verdict and verdict.stage else None,
        "outcome_words": OUTCOME_WORDS.get(verdict.outcome, verdict.outcome) if verdict else None,
        "corrections": corrections, "private_test": recording.private_test,
        # The other attempts of its cell this week, and which counts: public runs only, never a private test's.
        "attempts": run_attempts(data_of(site), run.id) if recording.private_test is None else None,
        "blob_base": blob_base, "media": recording.media,
        "tokens": sum(s.tokens_in + s.tokens_out for s in recording.steps),
        "cost": sum(s.cost_usd for s in recording.steps),
        **(extra or {}),
    })


async def run_page(request: Request) -> Response:
    site: Site = request.app.state.site
    raw = request.path_params["run_id"]
    key = ("run", raw, site.version)
    page = site.cache.get(key)
    if page is None:
        recording = await recording_of(site, raw)
        page = site.cache.put(key, await site.call(render_recording, site, recording))
    return send(request, page, max_age=10)


async def run_blob(request: Request) -> Response:
    site: Site = request.app.state.site
    digest = request.path_params["digest"]
    recording = await recording_of(site, request.path_params["run_id"])
    media_type = recording.blobs().get(digest)
    if media_type is None:
        raise NotFound("This run has no such screenshot, element list, trace or video.")
    etag = f'"{digest[:32]}"'
    headers = {"ETag": etag, "Cache-Control": "public, max-age=31536000, immutable"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    if media_type in STREAMED:
        return await streamed_blob(request, site, recording, digest, headers)
    try:
        body = await site.call(site.runtime.blobs.get, digest)
    except KeyError:
        raise NotFound("The blob is referenced by the run but missing from the store.") from None
    return Response(body, media_type=media_type, headers=headers)


async def streamed_blob(request: Request, site: Site, recording: Recording, digest: str,
                        headers: dict[str, str]) -> Response:
    """A run's trace or video (the caller checked the run may be seen), in pieces, with byte ranges; the trace
    is offered as a download named after the run."""
    media_type = recording.blobs()[digest]
    if media_type == TRACE_TYPE:
        headers = {**headers, "Content-Disposition": f'attachment; filename="trace-{recording.run.id}.zip"'}
    return await _stream(request, site, digest, media_type, headers)


async def _stream(request: Request, site: Site, digest: str, media_type: str, headers: dict[str, str]) -> Response:
    """A blob the run references, in pieces, with byte ranges."""
    try:
        size = await site.call(site.runtime.blobs.size, digest)
    except KeyError:
        raise NotFound("The blob is referenced by the run but missing from the store.") from None
    return blob_response(request, site.runtime.blobs, digest, size, media_type, headers)


async def run_video(request: Request) -> Response:
    site: Site = request.app.state.site
    recording = await recording_of(site, request.path_params["run_id"])
    return await video_response(request, site, recording, {"Cache-Control": "public, max-age=86400"})


async def video_response(request: Request, site: Site, recording: Recording, headers: dict[str, str]) -> Response:
    """The run's video (the caller checked the run may be seen), in pieces, with byte ranges: the one it named
    when it ended, else the one made of its screens, made now when it is watched for the first time."""
    media = recording.media
    if media is None or not media.has_video:
        raise NotFound("This run kept no video: a reading run has none, nor a run from before its browser "
                       "kept media, nor one made with CANITBUY_TRACES=off.")
    try:
        digest = media.video or await site.videos.video(media.screens)
    except NoVideoEncoder:
        raise NotFound("This site cannot make the run's video: it has no ffmpeg. The run's screenshots are on "
                       "its page, one a step.") from None
    except VideoNotMade as error:
        raise ServiceUnavailable(f"The run's video could not be made ({error}); its screenshots are on its "
                                 "page.") from None
    etag = f'"{digest[:32]}"'
    headers = {**headers, "ETag": etag}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return await _stream(request, site, digest, VIDEO_TYPE, headers)


routes = [
    Route("/runs/{run_id:str}", run_page),
    Route("/runs/{run_id:str}/video.webm", run_video, methods=["GET", "HEAD"]),
    Route("/runs/{run_id:str}/blobs/{digest:str}", run_blob, methods=["GET", "HEAD"]),
]
