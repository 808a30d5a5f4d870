"""Every percentage the site prints is rounded half up from its exact value (statistics.percent_text), as the
ranking table and the charts print theirs: 1 of 8 is 13%, where round() and `:.0f` (halves to even, on a float)
gave 12. Here the manual-test score line and the templates' `percent` filter; the repeats section is checked on
the pages themselves (tests/integration/web/test_repeats_pages.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec

from domain.courses.course import CURRENT_VERSION, load_course
from domain.leaderboards.manual_tests import HandResult, score_tests
from web.public.manual_tests import row_view
from web.rendering import make_environment

COURSE = load_course()
EIGHT = msgspec.structs.replace(
    COURSE, stations=[COURSE.control, *(COURSE.station(code) for code in COURSE.obstacle_codes[:8])]
)
"""The course with its control and its first eight obstacle stations: a score out of 8 can end in a half."""
AT = datetime(2026, 11, 24, 10, tzinfo=UTC)


def hand_results(passes: int) -> list[HandResult]:
    return [
        HandResult(test_id=f"t{n:02d}", kind="real_agent", agent="Rover", agent_version="3.1", station=code,
                   week="2026-W48", tested_on="2026-11-24", course_version=CURRENT_VERSION,
                   passed=code == COURSE.control.code or n <= passes, outcome="passed", video="ab" * 32,
                   at=AT + timedelta(seconds=n))
        for n, code in enumerate(EIGHT.codes)
    ]


def test_a_manual_test_score_of_1_of_8_is_13_percent_and_5_of_8_is_63() -> None:
    for passes, words in ((1, "1 of 8 passed (13%)"), (5, "5 of 8 passed (63%)"), (3, "3 of 8 passed (38%)")):
        [row] = score_tests(hand_results(passes), EIGHT)
        assert row_view(row, EIGHT.codes)["score"] == words


def test_the_percent_filter_rounds_half_up() -> None:
    render = make_environment().from_string("{{ a|percent }} {{ b|percent }} {{ c|percent }} {{ d|percent }}").render
    assert render(a=0.125, b=0.625, c=0.375, d=None) == "13% 63% 38% –"
