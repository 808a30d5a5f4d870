"""ISO weeks (Monday to Sunday, UTC), the unit in which results count."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")

RESULTS_CUTOFF = datetime(2026, 10, 22, 9, 0, tzinfo=UTC)
"""Agent results before this instant are left out (an agent bug, and the move to English and dollars)."""


class WeekError(ValueError):
    """A week that is not of the form 2026-W48, or does not exist."""


def week_of(moment: datetime) -> str:
    """The ISO week, in UTC, that `moment` falls in."""
    if moment.tzinfo is None:
        raise WeekError("a moment without a time zone has no week; use UTC")
    year, week, _ = moment.astimezone(UTC).isocalendar()
    return f"{year:04d}-W{week:02d}"


def parse_week(text: str) -> str:
    """Validate a week such as 2026-W48 and return it normalised."""
    match = _WEEK.match(text.strip())
    if not match:
        raise WeekError(f"{text!r} is not an ISO week such as 2026-W48")
    year, week = int(match.group(1)), int(match.group(2))
    try:
        date.fromisocalendar(year, week, 1)
    except ValueError:
        raise WeekError(f"{year} has no week {week}") from None
    return f"{year:04d}-W{week:02d}"


def week_start(week: str) -> datetime:
    """Monday 00:00 UTC of the week."""
    parsed = parse_week(week)
    year, number = int(parsed[:4]), int(parsed[6:])
    return datetime.combine(date.fromisocalendar(year, number, 1), time(0), tzinfo=UTC)


def week_end(week: str) -> datetime:
    """The first instant after the week (the next Monday 00:00 UTC)."""
    return week_start(week) + timedelta(days=7)


def previous_week(week: str) -> str:
    return week_of(week_start(week) - timedelta(days=1))


def next_week(week: str) -> str:
    return week_of(week_end(week))
