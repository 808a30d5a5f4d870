"""Facts and events for the scoring and projection tests, built without any I/O."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from domain.agent.verdicts import Verdict
from domain.courses.course import CURRENT_VERSION, RELEASES, course_bytes, load_course
from domain.eventlog.schema import Envelope, payload_type
from domain.projections.facts import CorrectionFact, ReleaseFact, RunFact, WeekFacts

COURSE = load_course()
WEEK = "2026-W48"
MONDAY = datetime(2026, 11, 23, 10, tzinfo=UTC)
OBSTACLES = COURSE.obstacle_codes
STATIONS = COURSE.codes
_ids = itertools.count(1)


def kind_of(station: str) -> str:
    return "reader" if COURSE.station(station).is_reading else "browser"


def run(model: str, station: str, passed: bool = True, *, at: datetime | None = None, position: int | None = None,
        status: str = "finished", week: str = WEEK, org: str | None = None, kind: str | None = None,
        outcome: str | None = None, started: datetime | None = None, repeat: int = 0) -> RunFact:
    """A run that ended `at` (by default a microsecond apart from every other) and started `started` (by default
    at the same instant, so the newest by start and by end agree unless a test says otherwise)."""
    n = next(_ids)
    verdict = Verdict(passed=passed, outcome=outcome or ("passed" if passed else "stopped"), stage="entry", step=4)
    ended = at or MONDAY + timedelta(microseconds=n)
    return RunFact(
        run_id=f"run-{n:06d}", station=station, model=model, week=week, kind=kind or kind_of(station),
        course_version=CURRENT_VERSION, task="shop", attempt=1, repeat=repeat, org=org, scheduled_at=MONDAY,
        position=position or n, status=status, started_at=started or ended, ended_at=ended,
        end_position=position or n, verdict=verdict if status == "finished" else None,
    )


def full_week(model: str, passes: int, **kwargs: Any) -> list[RunFact]:
    """s01 passed and the first `passes` obstacle stations passed, the rest failed."""
    return [run(model, "s01", **kwargs)] + [run(model, s, i < passes, **kwargs) for i, s in enumerate(OBSTACLES)]


def correction(target: str, change: str, *, week: str = WEEK, position: int = 10_000, withdrawn: bool = False,
               **kwargs: Any) -> CorrectionFact:
    n = next(_ids)
    return CorrectionFact(
        correction_id=f"corr-{n}", target=target, change=change, week=week, reason="found an error",
        public_text=f"correction {n}", by="staff@canitbuy.com", issued_at=MONDAY, position=position + n,
        withdrawn=withdrawn, **kwargs,
    )


def release() -> ReleaseFact:
    released = datetime.fromisoformat(RELEASES[CURRENT_VERSION].replace("Z", "+00:00"))
    return ReleaseFact(version=CURRENT_VERSION, released_at=released, spec=course_bytes().decode(), position=1)


def week_facts(runs: list[RunFact], corrections: list[CorrectionFact] | None = None) -> WeekFacts:
    return WeekFacts(
        week=WEEK, runs=runs, corrections=corrections or [], releases=[release()], labels={},
        position=max([r.position for r in runs] + [1]),
    )


def envelope(position: int, name: str, originator: str, version: int = 1, **fields: Any) -> Envelope:
    fields.setdefault("timestamp", MONDAY + timedelta(seconds=position))
    if "originator_topic" in payload_type(name).__struct_fields__:
        fields.setdefault("originator_topic", "x")
    return Envelope(position, originator, version, name, payload_type(name)(**fields))


def run_events(start: int, model: str, station: str, passed: bool, week: str = WEEK) -> list[Envelope]:
    """Scheduled, Started and Finished of one run at positions start..start+2."""
    rid = f"00000000-0000-0000-0000-{start:012d}"
    verdict = Verdict(passed=passed, outcome="passed" if passed else "stopped", stage="entry", step=3)
    return [
        envelope(start, "Run.Scheduled", rid, station=station, model=model, course_version=CURRENT_VERSION,
                 week=week, kind=kind_of(station), attempt=1, requested_by="test"),
        envelope(start + 1, "Run.Started", rid, 2, worker="w", browser_version="b", agent_version="a"),
        envelope(start + 2, "Run.Finished", rid, 3, verdict=verdict, steps=3, seconds=1.5),
    ]


def release_event() -> Envelope:
    r = release()
    return envelope(1, "CourseRelease.Released", "00000000-0000-0000-0000-00000000000r",
                    course_version=r.version, released_at=r.released_at, spec=r.spec)
