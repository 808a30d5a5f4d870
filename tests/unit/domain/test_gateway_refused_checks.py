"""A model the gateway refused our request for at the week's check (our key, credits or route) is not run, like an
unavailable one, but the line-up says the refusal was ours: the newest check of the model decides which. Checks
recorded before the field existed replay as they did (a 4xx then read as the model being unavailable)."""

from __future__ import annotations

from typing import Any

from lineup_checks import AFTERNOON, WEEK, checked_in_the_morning, reached, replayed_as_stored, unreachable

from domain.agent.lineup import LineUp, ModelCheckResult


def refused(model: str) -> ModelCheckResult:
    return ModelCheckResult(model=model, available=False, ms=80, gateway_refused=True,
                            problem="the gateway refused our request: HTTP 401")


def replayed(events: list[Any], *, drop: str = "") -> LineUp:
    """The line-up rebuilt from its events as the public schema stores them; `drop`: that field of every check
    result removed, as the result was stored before the field existed."""

    def without_the_field(state: dict[str, Any]) -> bool:
        for result in state.get("results", []):
            result.pop(drop, None)
        return True

    return replayed_as_stored(events, without_the_field if drop else None)


def test_a_model_the_gateway_refused_us_for_is_not_run_and_the_refusal_is_ours() -> None:
    lineup = checked_in_the_morning(reached("luna"), refused("haiku"), unreachable("nova"))
    assert lineup.unavailable(WEEK) == ["haiku", "nova"]  # neither is scheduled: the model was not asked
    assert lineup.refused(WEEK) == ["haiku"]  # and only one of the two is our doing
    assert lineup.to_check_again(WEEK) == ["haiku", "nova"]


def test_the_newest_check_says_whose_it_was() -> None:
    lineup = checked_in_the_morning(refused("haiku"), unreachable("nova"), refused("qwen"))
    lineup.record_check(WEEK, [unreachable("haiku"), refused("nova"), reached("qwen")], at=AFTERNOON, attempt=2)
    assert lineup.unavailable(WEEK) == ["haiku", "nova"]
    assert lineup.refused(WEEK) == ["nova"]


def test_the_refusal_replays_and_a_check_stored_before_the_field_reads_as_it_did() -> None:
    lineup = checked_in_the_morning(reached("luna"), refused("haiku"))
    events = list(lineup.collect_events())
    assert replayed(events).refused(WEEK) == ["haiku"]
    before = replayed(events, drop="gateway_refused")
    assert before.unavailable(WEEK) == ["haiku"] and before.refused(WEEK) == []
    assert before.checks[WEEK][1].problem == "the gateway refused our request: HTTP 401"
