"""The week's checks of the line-up's models, as the line-up records and folds them: a model the first check
(Monday 06:00 UTC) could not reach is asked again at the Monday-afternoon repeat, and is unavailable that week only
if that check cannot reach it either. A reply that arrives is the model's answer, whatever it says. The checks
replay exactly through the public schema, older events (without an attempt) as the first check."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lineup_checks import AFTERNOON, MORNING, WEEK, checked_in_the_morning, reached, replayed_as_stored, unreachable

from domain.agent.lineup import LineUp, LineUpError


def replayed(events: list[Any], *, without_attempt: bool = False) -> LineUp:
    """The line-up rebuilt from its events as the public schema stores them (what a restart or a replay reads);
    `without_attempt`: each check stored as it was before there was a second check, with no attempt."""

    def no_attempt(state: dict[str, Any]) -> bool:
        if "attempt" not in state:
            return False
        del state["attempt"]
        return True

    return replayed_as_stored(events, no_attempt if without_attempt else None)


def test_a_model_the_morning_could_not_reach_is_unavailable_until_the_afternoon_reaches_it() -> None:
    lineup = checked_in_the_morning(reached("luna"), unreachable("haiku"))
    assert lineup.unavailable(WEEK) == ["haiku"]
    assert lineup.to_check_again(WEEK) == ["haiku"]
    lineup.record_check(WEEK, [reached("haiku")], at=AFTERNOON, attempt=2)
    assert lineup.unavailable(WEEK) == []
    assert lineup.to_check_again(WEEK) == []


def test_a_model_unreachable_at_both_checks_is_unavailable_that_week() -> None:
    lineup = checked_in_the_morning(reached("luna"), unreachable("haiku"), unreachable("nova"))
    lineup.record_check(WEEK, [unreachable("haiku"), reached("nova")], at=AFTERNOON, attempt=2)
    assert lineup.unavailable(WEEK) == ["haiku"]
    assert lineup.to_check_again(WEEK) == []


def test_a_model_that_answers_unusably_is_available_and_its_problem_is_kept() -> None:
    lineup = checked_in_the_morning(reached("luna"), reached("qwen", problem="unusable reply: no action"))
    assert lineup.unavailable(WEEK) == [] and lineup.to_check_again(WEEK) == []
    qwen = lineup.checks[WEEK][1]
    assert qwen.available and not qwen.passed and qwen.problem == "unusable reply: no action"


def test_each_check_is_recorded_once_a_week_and_the_first_recorded_stands() -> None:
    lineup = checked_in_the_morning(unreachable("haiku"))
    lineup.record_check(WEEK, [reached("haiku")], at=MORNING)  # a second scheduler's morning check
    lineup.record_check(WEEK, [unreachable("haiku")], at=AFTERNOON, attempt=2)
    lineup.record_check(WEEK, [reached("haiku")], at=AFTERNOON, attempt=2)
    checks = [e for e in lineup.collect_events() if isinstance(e, LineUp.ModelsChecked)]
    assert [(e.attempt, e.results[0].available) for e in checks] == [(1, False), (2, False)]
    assert lineup.unavailable(WEEK) == ["haiku"]


def test_there_is_no_second_check_without_a_first_nor_a_third() -> None:
    lineup = LineUp.open(at=MORNING)
    with pytest.raises(LineUpError, match="no first check"):
        lineup.record_check(WEEK, [reached("haiku")], at=AFTERNOON, attempt=2)
    lineup.record_check(WEEK, [unreachable("haiku")], at=MORNING)
    with pytest.raises(LineUpError, match="checks 1 to 2"):
        lineup.record_check(WEEK, [reached("haiku")], at=AFTERNOON, attempt=3)


def test_a_check_recorded_before_there_was_a_second_replays_as_the_first() -> None:
    lineup = checked_in_the_morning(reached("luna"), unreachable("haiku"))
    rebuilt = replayed(list(lineup.collect_events()), without_attempt=True)
    assert rebuilt.checks == lineup.checks and rebuilt.second_checks == {}
    assert rebuilt.unavailable(WEEK) == ["haiku"] and rebuilt.to_check_again(WEEK) == ["haiku"]


models = st.lists(st.sampled_from(["luna", "haiku", "gemini", "qwen", "nova"]), unique=True, min_size=1)


@given(models, st.data())
def test_a_replay_gives_the_weeks_unavailable_models_the_rule_gives(names: list[str], data: st.DataObject) -> None:
    """Unavailable that week: not reached in the morning and not reached in the afternoon's check, which asks
    exactly the models the morning did not reach; a replay of the stored events folds to the same list."""
    morning = {m: data.draw(st.booleans(), label=f"{m} in the morning") for m in names}
    lineup = checked_in_the_morning(*(reached(m) if up else unreachable(m) for m, up in morning.items()))
    again = lineup.to_check_again(WEEK)
    assert again == [m for m in names if not morning[m]]
    afternoon = {m: data.draw(st.booleans(), label=f"{m} in the afternoon") for m in again}
    if again:
        lineup.record_check(WEEK, [reached(m) if up else unreachable(m) for m, up in afternoon.items()],
                            at=AFTERNOON, attempt=2)
    expected = [m for m in names if not morning[m] and not afternoon[m]]
    assert lineup.unavailable(WEEK) == expected
    rebuilt = replayed(list(lineup.collect_events()))
    assert rebuilt.unavailable(WEEK) == expected
    assert rebuilt.checks == lineup.checks and rebuilt.second_checks == lineup.second_checks
