"""Published weeks: the log position a week was computed at and the hashes of its ranking and Matrix.

Replaying the log up to that position gives the same bytes, forever. Republishing after corrections adds a
publication; the first stays.
"""

from __future__ import annotations

from datetime import datetime
from uuid import NAMESPACE_URL, UUID, uuid5

import msgspec
from eventsourcing.domain import Aggregate


def publication_id(week: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"canitbuy:week:{week}")


class Publication(msgspec.Struct, frozen=True, kw_only=True):
    week: str
    position: int
    """The notification-log position the week was computed at (inclusive)."""
    ranking_sha256: str
    matrix_sha256: str
    course_version: str
    by: str
    at: datetime


class PublicationError(Exception):
    pass


class Week(Aggregate):
    class Opened(Aggregate.Created):
        """The week's record was opened (at its first publication)."""

        week: str

    class Published(Aggregate.Event):
        """The week's ranking and Matrix were published."""

        position: int
        """Notification-log position the results were computed at (inclusive)."""
        ranking_sha256: str
        """sha256 of the canonical ranking JSON."""
        matrix_sha256: str
        """sha256 of the canonical Matrix JSON."""
        course_version: str
        by: str

        def apply(self, aggregate: Week) -> None:
            aggregate.publications.append(
                Publication(
                    week=aggregate.week, position=self.position, ranking_sha256=self.ranking_sha256,
                    matrix_sha256=self.matrix_sha256, course_version=self.course_version, by=self.by,
                    at=self.timestamp,
                )
            )

    def __init__(self, *, week: str) -> None:
        self.week = week
        self.publications: list[Publication] = []

    @classmethod
    def open(cls, *, week: str, at: datetime) -> Week:
        return cls._create(cls.Opened, id=publication_id(week), timestamp=at, week=week)

    def publish(
        self, *, position: int, ranking_sha256: str, matrix_sha256: str, course_version: str, by: str,
        at: datetime,
    ) -> None:
        last = self.publications[-1] if self.publications else None
        if last and last.position > position:
            raise PublicationError("a publication cannot go back in the log")
        if last and (last.ranking_sha256, last.matrix_sha256) == (ranking_sha256, matrix_sha256):
            raise PublicationError(f"{self.week} is already published with these results")
        self.trigger_event(
            self.Published, timestamp=at, position=position, ranking_sha256=ranking_sha256,
            matrix_sha256=matrix_sha256, course_version=course_version, by=by,
        )
