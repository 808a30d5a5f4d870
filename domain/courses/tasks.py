"""Which task a run gets on a station, and its text, from the course spec.

Browser stations get the shop task; trap stations (stage "order") add the shopper's brief; the reading
station is answered by a reader with the read task.
"""

from __future__ import annotations

from typing import Literal

from domain.courses.course import CourseSpec, Station

TaskKey = Literal["shop", "shop_brief", "read"]


def task_for(station: Station) -> TaskKey:
    if station.is_reading:
        return "read"
    if station.is_trap:
        return "shop_brief"
    return "shop"


def kind_for(station: Station) -> Literal["browser", "reader"]:
    return "reader" if station.is_reading else "browser"


def task_text(course: CourseSpec, task: str) -> str:
    """The words the agent is given."""
    if task == "read":
        return course.task.read
    if task == "shop_brief":
        return f"{course.task.shop}\n\n{shopper_brief(course)}"
    return course.task.shop


def shopper_brief(course: CourseSpec) -> str:
    """The shopper's instructions alone: the spec's sentence says where they apply, which the agent must
    not be told (it would name the trap)."""
    brief = course.task.brief
    marker = "instructions:"
    return brief.split(marker, 1)[1].strip() if marker in brief else brief
