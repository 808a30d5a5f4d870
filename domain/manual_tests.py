"""Manual tests of consumer agents, recorded by hand, labelled as such, with a video."""

from __future__ import annotations

from datetime import datetime
from uuid import uuid4

from eventsourcing.domain import Aggregate


class ManualTest(Aggregate):
    class Recorded(Aggregate.Created):
        """Staff recorded a manual test of a consumer agent on one station."""

        agent_name: str
        """e.g. ChatGPT agent, Comet."""
        station: str
        week: str
        course_version: str
        passed: bool
        outcome: str
        video: str | None
        """sha256 of the video in the blob store."""
        notes: str
        by: str

    def __init__(
        self, *, agent_name: str, station: str, week: str, course_version: str, passed: bool, outcome: str,
        video: str | None, notes: str, by: str,
    ) -> None:
        self.agent_name, self.station, self.week, self.course_version = agent_name, station, week, course_version
        self.passed, self.outcome, self.video, self.notes, self.by = passed, outcome, video, notes, by

    @classmethod
    def record(
        cls, *, agent_name: str, station: str, week: str, course_version: str, passed: bool, outcome: str,
        video: str | None, notes: str, by: str, at: datetime,
    ) -> ManualTest:
        return cls._create(
            cls.Recorded, id=uuid4(), timestamp=at, agent_name=agent_name, station=station, week=week,
            course_version=course_version, passed=passed, outcome=outcome, video=video, notes=notes, by=by,
        )
