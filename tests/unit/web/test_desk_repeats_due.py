"""When the desk says a cut-short cell is repeated by the schedule: the schedule repeats a cell once, from Monday
14:00 UTC until Monday ends. The overview said "repeated by the schedule" next Monday at 14:00 for every cut-short
cell, also one cut short on a Tuesday (never repeated: it stays empty that week), one of the week before, and a
repeat that was itself cut short; and during Monday afternoon it gave next Monday while the repeats were being made."""

from __future__ import annotations

from datetime import UTC, datetime

from domain.week.weeks import scheduled_repeat
from web.staff.needs import _schedule

WEEK = "2026-W50"  # Monday 2026-12-07
MORNING = datetime(2026, 12, 7, 9, 30, tzinfo=UTC)
AFTERNOON = datetime(2026, 12, 7, 21, 0, tzinfo=UTC)
TUESDAY = datetime(2026, 12, 8, 0, 0, tzinfo=UTC)


def test_a_first_attempt_cut_short_is_repeated_at_14_then_at_the_next_call_then_never() -> None:
    assert scheduled_repeat(WEEK, 1, MORNING) == datetime(2026, 12, 7, 14, 0, tzinfo=UTC)
    assert scheduled_repeat(WEEK, 1, AFTERNOON) == AFTERNOON
    assert scheduled_repeat(WEEK, 1, TUESDAY) is None
    assert scheduled_repeat("2026-W49", 1, MORNING) is None


def test_a_repeat_cut_short_is_not_repeated_again() -> None:
    assert scheduled_repeat(WEEK, 2, MORNING) is None
    assert scheduled_repeat(WEEK, 2, AFTERNOON) is None


def test_during_the_afternoon_the_schedule_names_the_end_of_the_repeats_not_next_monday_only() -> None:
    moves = {d.what: d.at for d in _schedule(AFTERNOON)}
    assert moves["the afternoon's repeats end"] == TUESDAY
    assert moves["the cut-short runs are repeated"] == datetime(2026, 12, 14, 14, 0, tzinfo=UTC)
    assert "the afternoon's repeats end" not in {d.what for d in _schedule(MORNING)}
    assert "the afternoon's repeats end" not in {d.what for d in _schedule(TUESDAY)}
