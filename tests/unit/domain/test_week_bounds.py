"""A week can be named only where the record's arithmetic on it stays within what a date holds: 9999-W52 ends in
the year 10000, which made a publication a 500, and `week run` and `audit verify` an OverflowError."""

from __future__ import annotations

import pytest

from domain.week.weeks import (
    FIRST_YEAR,
    LAST_YEAR,
    WeekError,
    next_week,
    parse_week,
    previous_week,
    week_end,
    week_start,
)


@pytest.mark.parametrize("week", [f"{FIRST_YEAR:04d}-W01", "2026-W48", "2026-W53", f"{LAST_YEAR:04d}-W52"])
def test_every_week_allowed_has_a_start_an_end_and_neighbours(week: str) -> None:
    assert parse_week(week) == week
    assert week_start(week) < week_end(week)
    assert previous_week(week) < week < next_week(week)


@pytest.mark.parametrize("week", ["9999-W52", "9999-W01", "0001-W01", "1999-W52", "0000-W01"])
def test_a_week_outside_the_years_is_refused_naming_them(week: str) -> None:
    with pytest.raises(WeekError, match=f"'{week}' is outside the years {FIRST_YEAR} to {LAST_YEAR}"):
        parse_week(week)


@pytest.mark.parametrize("week", ["２０２６-W48", "2026-W４８", "2026-W99", "2026-W00", "2026-w48", "26-W48"])
def test_other_digits_and_weeks_that_do_not_exist_are_refused(week: str) -> None:
    with pytest.raises(WeekError, match=week):
        parse_week(week)


def test_the_week_is_read_around_spaces_but_normalised() -> None:
    assert parse_week(" 2026-W01 ") == "2026-W01"
