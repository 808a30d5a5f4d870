"""The s12 reader's answer is read fact by fact: a fact the model wrote in a form that cannot be read is wrong, and
the other facts still count toward the four of five that pass."""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapters.models.reader import read_answer
from domain.agent.judge import judge_answer

RIGHT: dict[str, Any] = {
    "price_cents": 13900,
    "eu42_available": True,
    "eu44_available": False,
    "delivery_cents": 999,
    "return_days": 30,
}


def reply(content: str) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


@pytest.mark.parametrize(
    ("fact", "mistyped"),
    [
        ("return_days", "30"),
        ("price_cents", 13900.0),
        ("delivery_cents", "$9.99"),
        ("eu42_available", "yes"),
        ("eu44_available", 0),
        ("return_days", [30]),
    ],
)
def test_one_mistyped_fact_is_wrong_and_the_four_others_still_pass(fact: str, mistyped: object) -> None:
    read = read_answer(reply(json.dumps({**RIGHT, fact: mistyped, "text": "from the pages"})))
    assert read is not None and read.unreadable == [fact]
    verdict = judge_answer(read.answer)
    assert verdict.passed and verdict.facts_right == 4, verdict.reason
    assert [g.fact for g in verdict.facts if not g.right] == [fact]
    assert read.answer.text == "from the pages"


def test_two_mistyped_facts_leave_three_right_which_does_not_pass() -> None:
    read = read_answer(reply(json.dumps({**RIGHT, "price_cents": "139.00", "return_days": "30 days"})))
    assert read is not None and read.unreadable == ["price_cents", "return_days"]
    assert judge_answer(read.answer).facts_right == 3 and not judge_answer(read.answer).passed


def test_a_right_answer_is_read_whole_in_a_code_fence_and_a_fact_left_out_is_not_said() -> None:
    read = read_answer(reply(f"```json\n{json.dumps(RIGHT)}\n```"))
    assert read is not None and read.unreadable == [] and judge_answer(read.answer).facts_right == 5
    without = read_answer(reply(json.dumps({k: v for k, v in RIGHT.items() if k != "return_days"})))
    assert without is not None and without.unreadable == [] and without.answer.return_days is None


@pytest.mark.parametrize("content", ["I could not find it.", '{"price_cents": 13900, "eu42_av', "[1, 2]", ""])
def test_a_reply_without_a_json_object_holds_no_answer(content: str) -> None:
    assert read_answer(reply(content)) is None
    assert read_answer({"choices": []}) is None
