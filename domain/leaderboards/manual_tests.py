"""Tests of agents we do not run, checked by hand from a video and scored by the course's own rules.

Two kinds, as the method and the course spec name them:
- a **manual test**: we tested a consumer agent (ChatGPT agent, Comet, ...) by hand;
- a **real-agent test**: an agent builder sent a screen recording of their agent on the course, with the version
  and the date ("submit" in the course spec); we checked it by hand and publish it under the agent's name.

Both come with their video, and both are scored as the course's "scoring" says, so they can be read beside the
Matrix: control first (an obstacle result counts only when the same agent, the same day, got through s01), the
share of the 17 obstacle stations, and in the trap stations a pass only with an order that follows the brief.
They never enter the model ranking.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from fractions import Fraction
from typing import Literal
from uuid import uuid4

import msgspec
from eventsourcing.domain import Aggregate

from domain.courses.course import CourseSpec

HandKind = Literal["manual", "real_agent"]
KINDS: dict[str, str] = {"manual": "manual test", "real_agent": "real-agent test"}
"""The kind and the label readers see beside the agent's name."""
OUTCOMES = ("passed", "stopped", "verification_page", "broke_brief")


class ManualTestError(ValueError):
    """A test that cannot be recorded as the course's rules need it; the message says why."""


class ManualTest(Aggregate):
    class Recorded(Aggregate.Created):
        """Staff recorded, from its video, a test of an agent we do not run on one station."""

        agent_name: str
        """e.g. ChatGPT agent, Comet, or the name an agent builder gave."""
        station: str
        week: str
        course_version: str
        passed: bool
        """In a trap station (s15..s18): the checkout was reached with an order that follows the brief."""
        outcome: str
        video: str | None
        """sha256 of the video in the blob store (required since real-agent tests; older records may lack it)."""
        notes: str
        by: str
        kind: str = "manual"
        """manual (we tested a consumer agent by hand) or real_agent (an agent builder sent a recording)."""
        agent_version: str | None = None
        """The agent's version as shown or stated with the recording."""
        tested_on: str | None = None
        """The date (UTC, ISO) the recorded test took place: control first is counted within one day."""

    def __init__(
        self, *, agent_name: str, station: str, week: str, course_version: str, passed: bool, outcome: str,
        video: str | None, notes: str, by: str, kind: str = "manual", agent_version: str | None = None,
        tested_on: str | None = None,
    ) -> None:
        self.agent_name, self.station, self.week, self.course_version = agent_name, station, week, course_version
        self.passed, self.outcome, self.video, self.notes, self.by = passed, outcome, video, notes, by
        self.kind, self.agent_version, self.tested_on = kind, agent_version, tested_on

    @classmethod
    def record(
        cls, *, agent_name: str, station: str, week: str, course_version: str, passed: bool, outcome: str,
        video: str | None, notes: str, by: str, at: datetime, kind: str = "manual",
        agent_version: str | None = None, tested_on: str | None = None,
    ) -> ManualTest:
        if not video:
            raise ManualTestError("a test checked by hand is published only with its video")
        if kind not in KINDS:
            raise ManualTestError(f"the kind is one of {', '.join(KINDS)}")
        if kind == "real_agent" and not (agent_version and tested_on):
            raise ManualTestError("a real-agent test needs the agent's version and the date of the recording")
        return cls._create(
            cls.Recorded, id=uuid4(), timestamp=at, agent_name=agent_name, station=station, week=week,
            course_version=course_version, passed=passed, outcome=outcome, video=video, notes=notes, by=by,
            kind=kind, agent_version=agent_version, tested_on=tested_on,
        )


def check_outcome(course: CourseSpec, station: str, outcome: str) -> None:
    """The outcomes the course's scoring allows at a station: breaking the brief exists only in the traps."""
    if outcome not in OUTCOMES:
        raise ManualTestError("an outcome is not one of " + ", ".join(OUTCOMES))
    if outcome == "broke_brief" and not course.station(station).is_trap:
        raise ManualTestError(f"{station.upper()} has no shopper's brief: only the trap stations can break it")


class HandResult(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded station of a hand-checked test, as the scoring reads it."""

    test_id: str
    kind: str
    agent: str
    agent_version: str | None
    station: str
    week: str
    tested_on: str | None
    course_version: str
    passed: bool
    outcome: str
    video: str | None
    at: datetime


class HandRow(msgspec.Struct, frozen=True, kw_only=True):
    """One agent's test on one day, scored by the course's rules."""

    kind: str
    agent: str
    agent_version: str | None
    day: str
    """The date of the test (or its week, for records made before dates were kept)."""
    cells: dict[str, HandResult]
    """The newest record per station tested."""
    control_passed: bool
    passed: int
    """Obstacle stations passed, counted only when the control was passed."""
    of: int
    """The obstacle stations of the course (17 in course 2.1)."""
    tested: int
    """Obstacle stations with a result."""
    share: Fraction | None
    """passed / of, when the control was passed; None otherwise (no score without the control)."""
    videos: list[str]
    """The test ids whose video the row shows, one per distinct video."""


def _day(test: HandResult) -> str:
    return test.tested_on or test.week


def score_tests(tests: Iterable[HandResult], course: CourseSpec) -> list[HandRow]:
    """The course's scoring applied to hand-checked tests: one row per (kind, agent, version, day)."""
    groups: dict[tuple[str, str, str, str], dict[str, HandResult]] = {}
    for test in sorted(tests, key=lambda t: (t.at, t.test_id)):
        if test.course_version != course.version or test.station not in course.codes:
            continue
        key = (test.kind, test.agent, test.agent_version or "", _day(test))
        groups.setdefault(key, {})[test.station] = test  # the newest record of a station counts
    rows = [_row(cells, course) for cells in groups.values()]
    return sorted(rows, key=lambda r: (r.kind != "real_agent", r.agent.lower(), r.agent_version or "", r.day))


def _row(cells: dict[str, HandResult], course: CourseSpec) -> HandRow:
    first = next(iter(cells.values()))
    control = cells.get(course.control.code)
    control_passed = bool(control and control.passed)
    obstacles = course.obstacle_codes
    passed = sum(1 for c in obstacles if c in cells and cells[c].passed) if control_passed else 0
    videos: dict[str, str] = {}
    for code in course.codes:
        if code in cells and cells[code].video:
            videos.setdefault(str(cells[code].video), cells[code].test_id)
    return HandRow(
        kind=first.kind, agent=first.agent, agent_version=first.agent_version, day=_day(first), cells=cells,
        control_passed=control_passed, passed=passed, of=len(obstacles),
        tested=sum(1 for c in obstacles if c in cells),
        share=Fraction(passed, len(obstacles)) if control_passed else None, videos=list(videos.values()),
    )


def parse_day(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ManualTestError(f"{text!r} is not a date such as 2026-11-24") from None
