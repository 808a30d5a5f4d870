"""What an agent may do in one step: a tagged union, decoded from a model's reply or built by a baseline agent.

Element ids refer to the element list of the same step's observation; an agent never names screen points.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class Click(msgspec.Struct, frozen=True, tag="click"):
    id: str
    """Element id from this step's element list."""


class Type(msgspec.Struct, frozen=True, tag="type"):
    id: str
    text: str


class Select(msgspec.Struct, frozen=True, tag="select"):
    id: str
    option: str
    """The option's value or its visible label."""


class Check(msgspec.Struct, frozen=True, tag="check"):
    id: str
    on: bool = True


class Press(msgspec.Struct, frozen=True, tag="press"):
    key: str
    """A single key name such as Escape, Enter, Tab, ArrowDown."""


class Scroll(msgspec.Struct, frozen=True, tag="scroll"):
    direction: Literal["up", "down"] = "down"


class Back(msgspec.Struct, frozen=True, tag="back"):
    pass


class Goto(msgspec.Struct, frozen=True, tag="goto"):
    url: str
    """An address in the same store (absolute, or a path)."""


class Wait(msgspec.Struct, frozen=True, tag="wait"):
    seconds: float = 1.0
    """At most 5 seconds."""


class Stop(msgspec.Struct, frozen=True, tag="stop"):
    reason: str
    """Why the agent stops: done, blocked, account_required, verification_page, ..."""
    note: str = ""


Action = Click | Type | Select | Check | Press | Scroll | Back | Goto | Wait | Stop

ACTION_NAMES: tuple[str, ...] = tuple(cls.__struct_config__.tag for cls in Action.__args__)

MAX_WAIT_SECONDS = 5.0

_decoder = msgspec.json.Decoder(Action)


class ActionError(ValueError):
    """A reply that is not a valid action; costs the agent a step and is recorded."""


def decode_action(data: bytes | str) -> Action:
    try:
        action = _decoder.decode(data)
    except msgspec.DecodeError as error:
        raise ActionError(f"not a valid action: {error}") from None
    if isinstance(action, Wait) and not 0 <= action.seconds <= MAX_WAIT_SECONDS:
        raise ActionError(f"wait must be between 0 and {MAX_WAIT_SECONDS:g} seconds")
    return action


def describe(action: Action) -> str:
    """One line for recordings and logs."""
    fields = {f: getattr(action, f) for f in action.__struct_fields__}
    inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    return f"{action.__struct_config__.tag}({inner})"
