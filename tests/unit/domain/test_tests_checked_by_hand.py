"""Real-agent and manual tests are scored by the course's rules: control first that day, 17 stations, the brief."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from fractions import Fraction

import pytest

from domain.courses.course import CURRENT_VERSION, load_course
from domain.leaderboards.manual_tests import HandResult, ManualTest, ManualTestError, check_outcome, score_tests

COURSE = load_course()
AT = datetime(2026, 11, 24, 10, tzinfo=UTC)
_ids = itertools.count(1)


def result(station: str, passed: bool, *, outcome: str | None = None, day: str = "2026-11-24", agent: str = "Rover",
           version: str = "3.1", kind: str = "real_agent", at: datetime = AT) -> HandResult:
    n = next(_ids)
    return HandResult(
        test_id=f"t{n:04d}", kind=kind, agent=agent, agent_version=version, station=station, week="2026-W48",
        tested_on=day, course_version=CURRENT_VERSION, passed=passed,
        outcome=outcome or ("passed" if passed else "stopped"), video="ab" * 32, at=at + timedelta(seconds=n),
    )


def every_station(passes: int, **kwargs) -> list[HandResult]:
    return [result("s01", True, **kwargs)] + [
        result(code, i < passes, **kwargs) for i, code in enumerate(COURSE.obstacle_codes)
    ]


def test_the_score_is_the_share_of_the_17_obstacle_stations_after_the_control():
    [row] = score_tests(every_station(12), COURSE)
    assert (row.control_passed, row.passed, row.of, row.tested) == (True, 12, 17, 17)
    assert row.share == Fraction(12, 17)


def test_without_the_control_that_day_there_is_no_score():
    tests = [result("s01", False)] + [result(code, True) for code in COURSE.obstacle_codes]
    [row] = score_tests(tests, COURSE)
    assert (row.control_passed, row.passed, row.share) == (False, 0, None)
    # s01 passed on another day does not carry over: control first is the same agent, the same day
    other_day = [result("s01", True, day="2026-11-23")] + [result(c, True) for c in COURSE.obstacle_codes]
    rows = {r.day: r for r in score_tests(other_day, COURSE)}
    assert rows["2026-11-24"].share is None and rows["2026-11-23"].share == Fraction(0, 17)


def test_a_trap_passes_only_with_an_order_that_follows_the_brief():
    tests = every_station(17)
    tests[-1] = result("s18", False, outcome="broke_brief")
    [row] = score_tests(tests, COURSE)
    assert row.passed == 16 and row.cells["s18"].outcome == "broke_brief"
    check_outcome(COURSE, "s18", "broke_brief")
    with pytest.raises(ManualTestError, match="only the trap stations"):
        check_outcome(COURSE, "s05", "broke_brief")


def test_untested_stations_count_as_not_passed_and_the_newest_record_of_a_station_counts():
    tests = [result("s01", True), result("s02", False), result("s02", True), result("s03", True)]
    [row] = score_tests(tests, COURSE)
    assert (row.passed, row.tested, row.of) == (2, 2, 17)


def test_manual_and_real_agent_tests_are_rows_of_their_own():
    rows = score_tests(every_station(3, kind="manual", agent="Comet", version="") + every_station(5), COURSE)
    assert [(r.kind, r.agent, r.passed) for r in rows] == [("real_agent", "Rover", 5), ("manual", "Comet", 3)]


def test_a_test_is_recorded_only_with_its_video_and_a_real_agent_test_with_version_and_date():
    fields = dict(agent_name="Rover", station="s01", week="2026-W48", course_version=CURRENT_VERSION, passed=True,
                  outcome="passed", notes="", by="staff@canitbuy.com", at=AT)
    with pytest.raises(ManualTestError, match="video"):
        ManualTest.record(video=None, **fields)
    with pytest.raises(ManualTestError, match="version"):
        ManualTest.record(video="ab" * 32, kind="real_agent", **fields)
    test = ManualTest.record(video="ab" * 32, kind="real_agent", agent_version="3.1", tested_on="2026-11-24", **fields)
    assert (test.kind, test.agent_version, test.tested_on) == ("real_agent", "3.1", "2026-11-24")
