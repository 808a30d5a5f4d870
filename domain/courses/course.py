"""The course spec: the one source of truth for stations, tasks and scoring rules.

The published shape (camelCase keys, as served at /api/course.json) is decoded into typed structs here.
Released versions live beside this module as `courses/<version>.json` and never change.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import msgspec


class Stage(msgspec.Struct, frozen=True):
    key: str
    """Stage key: entry, navigation, variant, cart, checkout, data, order."""
    name: str
    """Stage name as shown to readers, e.g. "Getting in"."""


class Station(msgspec.Struct, frozen=True, rename="camel"):
    code: str
    """Station code, s01..s18."""
    url: str
    """Public address of the station in production."""
    stage: str
    """Stage key, or "control" for s01."""
    control: bool
    """True only for the control store s01."""
    name: str
    """Short name of the obstacle or trap."""
    obstacle: str
    """What differs from the control store."""
    fix: str
    """What the store should do instead."""
    registry: str | None
    """Address of the obstacle's registry entry (CIB-nnn); null for the control and for traps."""
    robust_agent: str | None
    """What a robust agent does here; null for the control."""

    @property
    def registry_code(self) -> str | None:
        return self.registry.rsplit("#", 1)[1] if self.registry else None

    @property
    def is_trap(self) -> bool:
        return self.stage == "order"

    @property
    def is_reading(self) -> bool:
        return self.stage == "data"


class Task(msgspec.Struct, frozen=True):
    shop: str
    brief: str
    read: str
    answer: str


class CourseSpec(msgspec.Struct, frozen=True):
    name: str
    version: str
    released: str
    page: str
    license: str
    task: Task
    rules: list[str]
    scoring: list[str]
    submit: str
    stages: list[Stage]
    stations: list[Station]

    def station(self, code: str) -> Station:
        for station in self.stations:
            if station.code == code:
                return station
        raise UnknownStationError(f"course {self.version} has no station {code!r}")

    @property
    def codes(self) -> list[str]:
        return [s.code for s in self.stations]

    @property
    def control(self) -> Station:
        return next(s for s in self.stations if s.control)

    @property
    def obstacle_codes(self) -> list[str]:
        """The stations a ranked model must have results from (all but the control)."""
        return [s.code for s in self.stations if not s.control]

    def stage_name(self, key: str) -> str:
        if key == "control":
            return "Control"
        return next((s.name for s in self.stages if s.key == key), key)


class UnknownStationError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class UnknownCourseError(LookupError):
    pass


CURRENT_VERSION = "2.1"
RELEASES = {"2.1": "2026-10-23T00:00:00Z"}


def course_bytes(version: str = CURRENT_VERSION) -> bytes:
    """The spec exactly as published (the bytes a course release event carries)."""
    try:
        return (resources.files("domain") / "courses" / f"{version}.json").read_bytes()
    except FileNotFoundError:
        raise UnknownCourseError(f"no course version {version!r} (known: {', '.join(RELEASES)})") from None


@cache
def load_course(version: str = CURRENT_VERSION) -> CourseSpec:
    return msgspec.json.decode(course_bytes(version), type=CourseSpec)


def decode_course(data: bytes | str) -> CourseSpec:
    return msgspec.json.decode(data, type=CourseSpec)
