"""A run's recording, read from its own events: what it was, every step, and how it ended.

Private runs (an organisation's tests) are refused here, at the one place every run page, run JSON and blob
request passes through, so none of them can leak by a forgotten check elsewhere. A private run opens only to a
viewer that may see its organisation (its members, our staff), or to everyone once the organisation's written
consent covers it; then the recording says so (`private_test`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec

from domain.agent.actions import Action
from domain.agent.ports import StepRecord
from domain.agent.runs import Run, ShownScreen
from domain.agent.verdicts import Verdict
from domain.eventlog.record import Record
from domain.orgs.organisations import OrganisationError
from domain.projections.facts import RunFact
from domain.projections.fold import fold_run, scheduled

RUN_FORMAT = "canitbuy-run/1"
LICENSE = "CC BY 4.0"


class RunSummary(msgspec.Struct, kw_only=True):
    id: str
    """The run's id."""
    station: str
    model: str
    week: str
    kind: str
    """browser, reader or manual."""
    task: str
    course_version: str
    attempt: int
    repeat: int
    status: str
    """scheduled, running, finished or cut_short."""
    scheduled_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    browser_version: str | None = None
    agent_version: str | None = None
    agent_release: int = 0
    """The agent release it ran with (see /agent); 0 when none was recorded."""
    steps: int = 0
    seconds: float | None = None
    cut_short_cause: str | None = None
    """our_error or model_connection: a cut-short run is not a result."""
    cut_short_detail: str | None = None


class PrivateTest(msgspec.Struct, kw_only=True):
    """Set on the recording of an organisation's private test; it never counts."""

    org: str
    name: str
    target_url: str | None = None
    public: bool = False
    """True when a written consent made it public."""


class RunMedia(msgspec.Struct, kw_only=True):
    """A browser run's Playwright trace and video, kept in the blob store when it ended (Run.MediaKept)."""

    trace: str | None = None
    """sha256 of trace.zip (opens in Playwright's trace viewer)."""
    trace_bytes: int = 0
    video: str | None = None
    """sha256 of the WebM video, for runs until 2 December 2026 (made as they ended)."""
    video_bytes: int = 0
    screens: tuple[ShownScreen, ...] = ()
    """The video's screens, for later runs: their video is made of them when first watched."""

    @property
    def has_video(self) -> bool:
        return bool(self.video or self.screens)


TRACE_TYPE, VIDEO_TYPE = "application/zip", "video/webm"
STREAMED = frozenset({TRACE_TYPE, VIDEO_TYPE})
"""Media types served in pieces with byte ranges (a video is seeked, a trace may be megabytes)."""


class Recording(msgspec.Struct, kw_only=True):
    """The public recording of one run (the body of /api/runs/{id}.json, with format and licence added)."""

    run: RunSummary
    steps: list[StepRecord]
    verdict: Verdict | None
    position: int
    """The run's aggregate version: it changes when the run records something new."""
    private_test: PrivateTest | None = None
    media: RunMedia | None = None
    """The run's trace and video; absent for runs that kept none (readers, older runs, CANITBUY_TRACES=off)."""

    def blobs(self) -> dict[str, str]:
        """Digest to media type of every blob the run references: the only blobs it may serve."""
        found: dict[str, str] = {}
        for step in self.steps:
            if step.screenshot:
                found[step.screenshot] = "image/jpeg"
            if step.elements:
                found[step.elements] = "application/json"
            if step.exchange:
                found[step.exchange] = "application/json"
        if self.media is not None:
            if self.media.trace:
                found[self.media.trace] = TRACE_TYPE
            if self.media.video:
                found[self.media.video] = VIDEO_TYPE
            for screen in self.media.screens:  # the steps' screenshots, and the screen the run ended on
                found.setdefault(screen.screenshot, "image/jpeg")
        return found


class NotPublic(LookupError):
    """No such run, or a private one: both answer 404, so a private run's existence is not revealed."""


def parse_run_id(text: str) -> UUID | None:
    try:
        return UUID(text)
    except ValueError:
        return None


SeesOrg = Callable[[str], bool]
"""Whether a viewer may see the private tests of an organisation (by slug)."""


def nobody(org: str) -> bool:
    return False


def load_recording(record: Record, run_id: UUID, sees_org: SeesOrg = nobody) -> Recording:
    events = list(record.repository.event_store.get(run_id))
    if not events or not isinstance(events[0], Run.Scheduled):
        raise NotPublic(str(run_id))
    first = events[0]
    private = _private_test(record, first, str(run_id), sees_org) if first.org is not None else None
    fact = scheduled(str(run_id), first, first.originator_version)
    steps: list[StepRecord] = []
    media: RunMedia | None = None
    for event in events[1:]:  # the one fold of a run's events, the projections' and the workers' too
        name = f"Run.{type(event).__name__}"
        fold_run(fact, name, event, event.originator_version)
        if isinstance(event, Run.StepRecorded):
            steps.append(event.step)
        elif isinstance(event, Run.MediaKept):
            media = RunMedia(trace=event.trace, trace_bytes=event.trace_bytes, video=event.video,
                             video_bytes=event.video_bytes, screens=event.screens)
        elif isinstance(event, Run.TraceCleaned) and media is not None:  # the replaced trace is named no more
            media = msgspec.structs.replace(media, trace=event.trace, trace_bytes=event.trace_bytes)
    return Recording(run=_summary(fact, len(steps)), steps=steps, verdict=fact.verdict,
                     position=events[-1].originator_version, private_test=private, media=media)


def _summary(fact: RunFact, recorded: int) -> RunSummary:
    """The recording's summary of the run. It names the week the run was scheduled for, as it always has, and
    counts the steps it holds unless the run finished (then the steps Run.Finished says were taken)."""
    return RunSummary(
        id=fact.run_id, station=fact.station, model=fact.model, week=fact.scheduled_week or fact.week,
        kind=fact.kind, task=fact.task, course_version=fact.course_version, attempt=fact.attempt,
        repeat=fact.repeat, status=fact.status, scheduled_at=fact.scheduled_at, started_at=fact.started_at,
        ended_at=fact.ended_at, browser_version=fact.browser_version, agent_version=fact.agent_version,
        agent_release=fact.agent_release, steps=fact.steps if fact.status == "finished" else recorded,
        seconds=fact.seconds, cut_short_cause=fact.cut_short_cause, cut_short_detail=fact.cut_short_detail,
    )


def _private_test(record: Record, first: Run.Scheduled, run_id: str, sees_org: SeesOrg) -> PrivateTest:
    """The label of a private test the viewer may see; NotPublic when it may not (or the organisation is gone)."""
    assert first.org is not None
    try:
        organisation = record.organisation(first.org)
    except OrganisationError:
        raise NotPublic(run_id) from None
    public = organisation.is_public(run_id, first.timestamp)
    if not public and not sees_org(first.org):
        raise NotPublic(run_id)
    return PrivateTest(org=first.org, name=organisation.name, target_url=first.target_url, public=public)


def action_text(action: Action | None) -> str:
    if action is None:
        return "no valid action"
    fields = {f: getattr(action, f) for f in action.__struct_fields__}
    words = ", ".join(f"{k} {v!r}" if isinstance(v, str) else f"{k} {v}" for k, v in fields.items())
    return f"{action.__struct_config__.tag} {words}".strip()


def recording_json(recording: Recording) -> bytes:
    body: dict[str, Any] = {
        "format": RUN_FORMAT, "license": LICENSE,
        "citation": f"CanItBuy AI agent run {recording.run.id}, {recording.run.model} on {recording.run.station}, "
                    f"week {recording.run.week}, course {recording.run.course_version}. {LICENSE}.",
        **msgspec.to_builtins(recording),
    }
    verdict = body.get("verdict")
    for key in ("arc", "receipt"):  # newer verdict fields appear only when set: older runs keep their bytes
        if verdict is not None and verdict.get(key) is None:
            verdict.pop(key, None)
    if not body["run"]["agent_release"]:  # fields added later appear only when set: older runs keep their bytes
        body["run"].pop("agent_release")
    for step in body["steps"]:
        if step.get("exchange") is None:
            step.pop("exchange", None)
    if body.get("media") is None:  # runs without a trace and video keep the bytes they always had
        body.pop("media", None)
    elif not body["media"]["screens"]:  # ...and runs whose video was made as they ended
        body["media"].pop("screens")
    label = body.pop("private_test")  # public runs keep the shape (and bytes) they always had
    if label is not None:
        body["private_test"] = {"org": label["org"], "name": label["name"], "target_url": label["target_url"],
                                "counts": False}
    return msgspec.json.encode(body)


class ExchangeView(msgspec.Struct, kw_only=True):
    """A model step's exchange as the recording page shows it: what the model was given, and what it said."""

    system: str
    """The system prompt as sent."""
    user: str
    """The step's message text as sent."""
    image: str
    """The screenshot sent with it, named by its sha256 (the step's screenshot blob)."""
    tool_schema_sha256: str
    tools: list[str]
    """Names of the tools sent."""
    reply: str
    """The model's raw reply (the response body, pretty-printed JSON)."""


def exchange_view(data: bytes) -> ExchangeView | None:
    """Read an exchange blob; None when it is not one (an older shape is shown as far as it goes)."""
    try:
        body = json.loads(data)
        sent = body["request"]["messages"]
    except (ValueError, KeyError, TypeError):
        return None
    system = next((m.get("content") for m in sent if m.get("role") == "system"), "")
    content: Any = next((m.get("content") for m in sent if m.get("role") == "user"), [])
    parts: list[dict[str, Any]] = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
    user = "\n".join(p.get("text", "") for p in parts if p.get("type") == "text")
    image = next((p["image_url"]["url"] for p in parts if p.get("type") == "image_url"), "")
    tools = [t.get("function", {}).get("name", "") for t in body["request"].get("tools", [])]
    return ExchangeView(system=str(system), user=user, image=image if image.startswith("sha256:") else "",
                        tool_schema_sha256=str(body.get("tool_schema_sha256", "")), tools=tools,
                        reply=json.dumps(body.get("response"), indent=2, ensure_ascii=False))
