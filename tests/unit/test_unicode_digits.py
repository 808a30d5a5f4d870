"""Digits that are not ASCII ('²', '①': str.isdigit() holds for them, int() raises; '٣': int() reads it as 3) in
the places our own code reads a number from text: a cart's pair count as a built-in agent sees it, the provider
limits setting, the test runner's lane count. Each is treated as the malformed value it is, as "abc" is there."""

from __future__ import annotations

import pytest

from adapters.agents.context import Memory, Situation
from adapters.agents.profiles import ROBUST
from adapters.agents.rules_cart import cart
from adapters.models.throttle import parse_limits
from adapters.settings import Settings, SettingsError
from domain.agent.actions import Click, Type
from domain.agent.observation import Element, Observation
from ops.testsuite import jobs

NOT_ASCII = ["²", "①", "٣", "𝟙", "1²", "3٣"]


def cart_page(pairs: str) -> Situation:
    """A cart of the chosen shoe whose pairs field shows `pairs`, with its buttons, as a careful agent sees it."""
    observation = Observation(url="https://s15.lab.localhost/cart", title="Your cart", elements=[
        Element(id="e1", role="button", name="Remove Aero Run 2"),
        Element(id="e2", role="spinbutton", name="Pairs", value=pairs),
        Element(id="e3", role="button", name="Update"),
        Element(id="e4", role="button", name="Check out"),
    ])
    return Situation(observation, ROBUST, Memory(product="Aero Run 2"), [])


def test_a_careful_agent_sets_a_count_of_two_pairs_back_to_one() -> None:
    decision = cart(cart_page("2"))
    assert decision is not None and decision.action == Type(id="e2", text="1")


@pytest.mark.parametrize("pairs", NOT_ASCII)
def test_a_pairs_field_in_other_digits_is_no_count_to_correct_as_one_in_words_is_not(pairs: str) -> None:
    in_words = cart(cart_page("abc"))
    assert in_words is not None and in_words.action == Click(id="e4")
    decision = cart(cart_page(pairs))
    assert decision is not None and decision.action == in_words.action


@pytest.mark.parametrize("number", NOT_ASCII)
def test_a_provider_limit_in_other_digits_is_refused_naming_the_part(number: str) -> None:
    with pytest.raises(ValueError, match=f"not provider=N: 'anthropic={number}'"):
        parse_limits(f"openai=2, anthropic={number}")
    with pytest.raises(SettingsError, match=f"CANITBUY_PROVIDER_CONCURRENCY: not provider=N: 'x={number}'"):
        Settings.from_env({"CANITBUY_PROVIDER_CONCURRENCY": f"x={number}"})
    assert parse_limits("anthropic=2, *=4") == {"anthropic": 2, "*": 4}


@pytest.mark.parametrize("raw", ["abc", *NOT_ASCII])
def test_the_test_runners_lane_count_in_other_digits_is_refused_with_its_message(
        monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("CANITBUY_TEST_JOBS", raw)
    with pytest.raises(SystemExit, match="CANITBUY_TEST_JOBS must be a whole number of 1 or more, not "):
        jobs()
    monkeypatch.setenv("CANITBUY_TEST_JOBS", "3")
    assert jobs() == 3
