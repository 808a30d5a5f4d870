"""Course releases: a released course version never changes; a new version is a new release."""

from __future__ import annotations

from datetime import datetime
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate


def release_id(version: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"canitbuy:course:{version}")


class CourseRelease(Aggregate):
    class Released(Aggregate.Created):
        """A course version was released with its complete spec."""

        course_version: str
        """e.g. 2.1"""
        released_at: datetime
        """When the version came into force."""
        spec: str
        """The complete course spec, in its published JSON shape, exactly as served."""

    def __init__(self, *, course_version: str, released_at: datetime, spec: str) -> None:
        self.course_version, self.released_at, self.spec = course_version, released_at, spec

    @classmethod
    def release(cls, *, version: str, released_at: datetime, spec: str, at: datetime) -> CourseRelease:
        return cls._create(
            cls.Released, id=release_id(version), timestamp=at, course_version=version,
            released_at=released_at, spec=spec,
        )
