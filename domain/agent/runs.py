"""A run: one agent (a model or a built-in agent) on one station, step by step.

Events are facts in the past tense and a public schema: every field is documented for auditors. A run that
was cut short is never a result; a finished run carries the judge's verdict, decided by code.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID, uuid4

import msgspec
from eventsourcing.domain import Aggregate

from domain.agent.ports import StepRecord
from domain.agent.verdicts import CutShortCause, Verdict

RunKind = Literal["browser", "reader", "manual", "arc"]
RunStatus = Literal["scheduled", "running", "finished", "cut_short"]

MAX_STEPS = 16
MAX_SECONDS = 150.0


class RunError(Exception):
    """A command that does not fit the run's state."""


class ShownScreen(msgspec.Struct, frozen=True, kw_only=True):
    """One screen of a browser run's video: a JPEG in the blob store and how long it stayed the agent's view."""

    screenshot: str
    """sha256 of the JPEG (a step's screenshot, or the screen as the run left it) in the blob store."""
    seconds: float
    """How long it is shown: until the next screen was taken, to the millisecond (the last: one second)."""


class Run(Aggregate):
    class Scheduled(Aggregate.Created):
        """A run was scheduled."""

        station: str
        """Station code, s01..s18; for ARC runs the test set's row id (s01..s18 or arc100-v1-001..)."""
        model: str
        """Model or built-in agent name, e.g. claude-haiku-5.5 or baseline-robust."""
        course_version: str
        """The course version the run belongs to, e.g. 2.1."""
        week: str
        """The ISO week the run was scheduled for, e.g. 2026-W48 (part of its id). When `counts_by_start` is true
        the result counts for the ISO week, UTC, in which the run started (Run.Started), whatever this says."""
        kind: str
        """browser, reader (no JavaScript, the reading station), manual, or arc (ARC's task in a browser; never
        scored in our ranking)."""
        attempt: int
        """1 for the first run of this model, station, week and repeat; higher for a repeat after a cut-short."""
        requested_by: str
        """scheduler, cli, or a staff member's e-mail."""
        repeat: int = 0
        """Index of the repeat within the week (0..k-1) when k runs per cell are made."""
        task: str = "shop"
        """shop, shop_brief (trap stations), read, or arc ("Add this product to the cart: <product_url>")."""
        org: str | None = None
        """For private tests: the organisation that owns the run. Null for public runs."""
        target_url: str | None = None
        """For private tests and ARC runs: the start address when it is not a lab station."""
        counts_by_start: bool = False
        """True for every run scheduled since the week became the calendar (December 2026): the result counts for
        the ISO week (Monday to Sunday, UTC) in which the run started. False on older events, whose result counts
        for `week` as it did when they were published (so published weeks still replay to the same bytes)."""

    class Started(Aggregate.Event):
        """A worker took the run and started it."""

        worker: str
        """Which worker (host and process) runs it."""
        browser_version: str
        agent_version: str
        agent_release: int = 0
        """The agent release the run ran with (its prompt, tool schema, observation rule, limits, guards; see
        AgentReleases.Released). 0 for runs without one: readers, and runs started before releases were kept."""

        def apply(self, aggregate: Run) -> None:
            aggregate.status = "running"

    class StepRecorded(Aggregate.Event):
        """One step happened. Screenshot and element list are blobs named by their sha256."""

        step: StepRecord

        def apply(self, aggregate: Run) -> None:
            aggregate.steps_recorded += 1

    class Finished(Aggregate.Event):
        """The run ended with a verdict decided by code."""

        verdict: Verdict
        steps: int
        """Steps taken."""
        seconds: float
        """Wall time of the run."""

        def apply(self, aggregate: Run) -> None:
            aggregate.status, aggregate.verdict = "finished", self.verdict

    class CutShort(Aggregate.Event):
        """The run broke off through our error or a failed model connection. Never a result."""

        cause: str
        """our_error or model_connection."""
        detail: str
        steps: int = 0
        seconds: float = 0.0

        def apply(self, aggregate: Run) -> None:
            aggregate.status = "cut_short"

    class MediaKept(Aggregate.Event):
        """The browser run's Playwright trace and the screens of its video were kept in the blob store, after it
        ended (the browser writes the trace when its context closes). Recordings only: no result depends on it.
        At most one per run."""

        trace: str | None = None
        """sha256 of the Playwright trace (trace.zip; opens in Playwright's trace viewer) in the blob store."""
        trace_bytes: int = 0
        video: str | None = None
        """sha256 of the run's video (WebM, 480x300) in the blob store, for runs until 2 December 2026, whose
        video was made as they ended. Later runs name `screens` instead: their video is made from them the first
        time it is watched (it is a view of the screens, like a page of the site)."""
        video_bytes: int = 0
        screens: tuple[ShownScreen, ...] = ()
        """The screens the run's video shows, in order: each step's screenshot, then the screen as the run left
        it, each for as long as it stayed the agent's view. Empty for runs that named a `video`."""

        def apply(self, aggregate: Run) -> None:
            aggregate.media_kept, aggregate.trace = True, self.trace

    class TraceCleaned(Aggregate.Event):
        """The run's kept trace was replaced by the same trace without what was not the run's own: traces kept
        until 3 December 2026 hold `trace.stacks`, the call stacks of every API call on the browser's connection,
        so of the runs beside it too, possibly private ones (`adapters/browser/trace_file.py`). Written by
        `canitbuy traces clean`. The replaced blob stays in the store (blobs are never rewritten), but no page
        and no recording names it any more. Recordings only: no result depends on it."""

        replaced: str
        """sha256 of the trace it replaces (the one Run.MediaKept, or an earlier Run.TraceCleaned, named)."""
        trace: str | None = None
        """sha256 of the cleaned trace in the blob store; None when the replaced one could not be read as a zip
        (its call stacks could not be taken out): the run then offers no trace."""
        trace_bytes: int = 0

        def apply(self, aggregate: Run) -> None:
            aggregate.trace = self.trace

    def __init__(
        self, *, station: str, model: str, course_version: str, week: str, kind: str, attempt: int,
        requested_by: str, repeat: int = 0, task: str = "shop", org: str | None = None,
        target_url: str | None = None, counts_by_start: bool = False,
    ) -> None:
        self.counts_by_start = counts_by_start
        self.station, self.model, self.course_version, self.week = station, model, course_version, week
        self.kind, self.attempt, self.repeat, self.task = kind, attempt, repeat, task
        self.requested_by, self.org, self.target_url = requested_by, org, target_url
        self.status: RunStatus = "scheduled"
        self.steps_recorded = 0
        self.verdict: Verdict | None = None
        self.media_kept = False
        self.trace: str | None = None
        """sha256 of the Playwright trace the run offers now (Run.MediaKept's, or a Run.TraceCleaned's)."""

    @classmethod
    def schedule(
        cls,
        *,
        station: str,
        model: str,
        course_version: str,
        week: str,
        kind: RunKind,
        attempt: int = 1,
        requested_by: str,
        at: datetime,
        repeat: int = 0,
        task: str = "shop",
        org: str | None = None,
        target_url: str | None = None,
        id: UUID | None = None,  # noqa: A002 - the library's name
    ) -> Run:
        if attempt < 1 or repeat < 0:
            raise RunError("attempt starts at 1 and repeat at 0")
        return cls._create(
            cls.Scheduled,
            id=id or uuid4(),
            timestamp=at,
            station=station,
            model=model,
            course_version=course_version,
            week=week,
            kind=kind,
            attempt=attempt,
            requested_by=requested_by,
            repeat=repeat,
            task=task,
            org=org,
            target_url=target_url,
            counts_by_start=True,
        )

    @property
    def is_over(self) -> bool:
        return self.status in ("finished", "cut_short")

    def start(self, *, worker: str, browser_version: str, agent_version: str, at: datetime,
              agent_release: int = 0) -> None:
        if self.status != "scheduled":
            raise RunError(f"run {self.id} is {self.status}; only a scheduled run starts")
        self.trigger_event(
            self.Started, timestamp=at, worker=worker, browser_version=browser_version,
            agent_version=agent_version, agent_release=agent_release,
        )

    def record_step(self, step: StepRecord, *, at: datetime) -> None:
        if self.status != "running":
            raise RunError(f"run {self.id} is {self.status}; steps are recorded only while it runs")
        if step.number != self.steps_recorded + 1:
            raise RunError(f"run {self.id} expected step {self.steps_recorded + 1}, got {step.number}")
        self.trigger_event(self.StepRecorded, timestamp=at, step=step)

    def finish(self, verdict: Verdict, *, steps: int, seconds: float, at: datetime) -> None:
        if self.status != "running":
            raise RunError(f"run {self.id} is {self.status}; only a running run finishes")
        self.trigger_event(self.Finished, timestamp=at, verdict=verdict, steps=steps, seconds=seconds)

    def cut_short(self, cause: CutShortCause, detail: str, *, steps: int, seconds: float, at: datetime) -> None:
        if self.is_over:
            raise RunError(f"run {self.id} is already {self.status}")
        self.trigger_event(
            self.CutShort, timestamp=at, cause=cause, detail=detail, steps=steps, seconds=seconds
        )

    def keep_media(self, *, trace: str | None, trace_bytes: int, video: str | None, video_bytes: int,
                   at: datetime, screens: tuple[ShownScreen, ...] = ()) -> None:
        if not self.is_over:
            raise RunError(f"run {self.id} is {self.status}; its trace and video are kept once it has ended")
        if self.media_kept:
            raise RunError(f"run {self.id} has kept its trace and video already")
        self.trigger_event(self.MediaKept, timestamp=at, trace=trace, trace_bytes=trace_bytes, video=video,
                           video_bytes=video_bytes, screens=screens)

    def clean_trace(self, *, replaced: str, trace: str | None, trace_bytes: int, at: datetime) -> None:
        """Offer `trace` (None: no trace) in place of the run's trace `replaced`, the one it offers now."""
        if self.trace is None:
            raise RunError(f"run {self.id} offers no trace to replace")
        if self.trace != replaced:
            raise RunError(f"run {self.id} offers trace {self.trace[:12]}, not {replaced[:12]}")
        if trace == replaced:
            raise RunError(f"run {self.id}: a trace cannot replace itself")
        self.trigger_event(self.TraceCleaned, timestamp=at, replaced=replaced, trace=trace, trace_bytes=trace_bytes)
