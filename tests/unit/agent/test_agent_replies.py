from __future__ import annotations

import json

import pytest

from adapters.models.agent import ReplyError, parse_reply
from adapters.models.prompt import act_tool
from domain.agent.actions import Click, Stop, Wait


def message(**fields: object) -> dict[str, object]:
    return {"choices": [{"message": {"role": "assistant", **fields}}]}


def test_a_tool_call_becomes_the_action_and_its_notes() -> None:
    call = {"function": {"name": "act", "arguments": json.dumps({"notes": "first", "action": {"type": "click",
                                                                                                "id": "e7"}})}}
    parsed = parse_reply(message(tool_calls=[call]))
    assert (parsed.action, parsed.notes) == (Click(id="e7"), "first")


def test_json_in_the_text_is_the_fallback_even_inside_a_code_fence() -> None:
    text = 'Sure.\n```json\n{"action": {"type": "stop", "reason": "done"}}\n```'
    parsed = parse_reply(message(content=text))
    assert (parsed.action, parsed.notes) == (Stop(reason="done"), "")
    assert parse_reply(message(content='{"type": "wait", "seconds": 2}')).action == Wait(seconds=2)


@pytest.mark.parametrize("reply", [
    message(content="I would click the first product."),
    message(content='{"action": {"type": "fly", "id": "e1"}}'),
    message(content='{"action": {"type": "wait", "seconds": 60}}'),
    {"choices": []},
])
def test_a_reply_without_a_valid_action_is_refused_with_a_reason(reply: dict[str, object]) -> None:
    with pytest.raises(ReplyError):
        parse_reply(reply)


def test_the_act_tool_schema_names_every_action() -> None:
    schema = act_tool()["function"]["parameters"]
    assert set(schema["$defs"]) >= {"Click", "Type", "Select", "Check", "Press", "Scroll", "Back", "Goto", "Wait",
                                    "Stop"}
