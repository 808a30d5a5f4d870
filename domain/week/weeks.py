"""ISO weeks (Monday to Sunday, UTC), the unit in which results count."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")

RESULTS_CUTOFF = datetime(2026, 10, 22, 9, 0, tzinfo=UTC)
"""Agent results before this instant are left out (an agent bug, and the move to English and dollars)."""


Clock = Callable[[], datetime]
"""What the schedule, the week commands and the record read the time from: the system clock by default, a
clock the tests move (Monday morning, Monday afternoon, Sunday night, the next Monday) otherwise."""


LINEUP_AT = timedelta(hours=6)
"""The weekly schedule, after Monday 00:00 UTC: the line-up starts."""
REPEAT_AT = timedelta(hours=14)
"""That morning's cut-short runs are repeated."""
REPEAT_UNTIL = timedelta(days=1)
"""The end of the repeats' window, Monday's end. The method repeats a cut-short run "on Monday afternoon", so the
schedule repeats from REPEAT_AT until then and not later in the week."""
MAX_ATTEMPTS = 2
"""The first run and one repeat the same Monday afternoon; still missing after that, the cell stays empty."""
PUBLISH_AFTER = timedelta(minutes=10)
"""After the week's end (Monday 00:00 UTC): a run started in the last instant of Sunday is in the log by then."""

def system_clock() -> datetime:
    return datetime.now(UTC)


class WeekError(ValueError):
    """A week that is not of the form 2026-W48, or does not exist."""


def week_of(moment: datetime) -> str:
    """The ISO week, in UTC, that `moment` falls in."""
    if moment.tzinfo is None:
        raise WeekError("a moment without a time zone has no week; use UTC")
    year, week, _ = moment.astimezone(UTC).isocalendar()
    return f"{year:04d}-W{week:02d}"


FIRST_YEAR, LAST_YEAR = 2000, 9998
"""The years a week may be named in. The benchmark began in 2026; the bounds are there so that every week named
has a week before it and a week after it that a date can hold: 9999-W52 ends in the year 10000, which Python's
dates cannot reach, so a publication, a run or an audit of it raised OverflowError where it should be refused."""


def parse_week(text: str) -> str:
    """Validate a week such as 2026-W48 and return it normalised."""
    match = _WEEK.match(text.strip())
    if not match or not text.isascii():
        raise WeekError(f"{text!r} is not an ISO week such as 2026-W48")
    year, week = int(match.group(1)), int(match.group(2))
    if not FIRST_YEAR <= year <= LAST_YEAR:
        raise WeekError(f"{text.strip()!r} is outside the years {FIRST_YEAR} to {LAST_YEAR} a week may be named in")
    try:
        date.fromisocalendar(year, week, 1)
    except ValueError:
        raise WeekError(f"{text.strip()!r} is not a week: {year} has no week {week}") from None
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


def scheduled_repeat(week: str, attempt: int, now: datetime) -> datetime | None:
    """When the schedule repeats a cell of `week` whose newest attempt (`attempt`, 1 for the first run) was cut
    short, seen at `now`: Monday 14:00 UTC if that is still to come, `now` (its next call) during the afternoon's
    window, and None when it never will (the window is over, or the cell had its repeat): a repeat then is a
    person's, from the desk, or the cell stays empty that week."""
    if attempt >= MAX_ATTEMPTS:
        return None
    monday = week_start(week)
    if now < monday + REPEAT_AT:
        return monday + REPEAT_AT
    return now if now < monday + REPEAT_UNTIL else None


def next_week(week: str) -> str:
    return week_of(week_end(week))


def is_over(week: str, now: datetime) -> bool:
    """Whether the week has ended at `now`: nothing can add a run to it any more."""
    return now >= week_end(week)


class PastWeekError(WeekError):
    """A week that is over was named where only the week in progress can be: a run counts for the week in which it
    starts, so no run can be added to a week that is over."""

    def __init__(self, week: str, now: datetime) -> None:
        super().__init__(
            f"{week} is over (it ended {week_end(week):%Y-%m-%d %H:%M} UTC); a run counts for the week in which it "
            f"starts, so only {week_of(now)} can take runs now"
        )


def open_week(week: str, now: datetime) -> str:
    """The week, normalised, if runs can still be added to it at `now` (it is the week in progress)."""
    week = parse_week(week)
    if is_over(week, now):
        raise PastWeekError(week, now)
    if week != week_of(now):
        raise WeekError(f"{week} has not begun; a run counts for the week in which it starts, so only "
                        f"{week_of(now)} can take runs now")
    return week
