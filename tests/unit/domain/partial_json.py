"""Read JSON that breaks off part way (the seed copy of the released course spec does), keeping what is there.

Every value that ends before the text does is read exactly; the one value on the path to the break is kept as
far as it goes: a string as its prefix, an object or array as the members that were complete plus the last
partial one. `assert_released_as` then checks a full document against it field by field.
"""

from __future__ import annotations

import json
from json.decoder import scanstring
from typing import Any

WHITESPACE = " \t\r\n"


class Prefix(str):
    """A string value the text broke off inside: the full value must start with it."""


class PartialObject(dict[str, Any]):
    """An object the text broke off inside: the keys it has must match; later keys are unknown."""


class PartialArray(list[Any]):
    """An array the text broke off inside: the items it has must match; later items are unknown."""


class _End(Exception):
    """The text ended inside a value."""

    def __init__(self, partial: Any) -> None:
        self.partial = partial


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in WHITESPACE:
        i += 1
    if i >= len(text):
        raise _End(None)
    return i


def _string(text: str, i: int) -> tuple[str, int]:
    try:
        return scanstring(text, i + 1)
    except json.JSONDecodeError:
        raw = text[i + 1:]
        raw = raw[: len(raw) - 1] if raw.endswith("\\") else raw  # a cut escape is not part of the prefix
        raise _End(Prefix(json.loads(f'"{raw}"'))) from None


def _object(text: str, i: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    i = _skip(text, i + 1)
    if text[i] == "}":
        return out, i + 1
    while True:
        try:
            key, i = _string(text, _skip(text, i))
            i = _skip(text, i)
        except _End:
            raise _End(PartialObject(out)) from None  # a cut key names no field
        assert text[i] == ":", f"expected ':' at {i}"
        try:
            out[key], i = _value(text, i + 1)
        except _End as end:
            if end.partial is not None:
                out[key] = end.partial
            raise _End(PartialObject(out)) from None
        i = _skip(text, i)
        if text[i] == "}":
            return out, i + 1
        assert text[i] == ",", f"expected ',' at {i}"
        i += 1


def _array(text: str, i: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    i = _skip(text, i + 1)
    if text[i] == "]":
        return out, i + 1
    while True:
        try:
            item, i = _value(text, i)
        except _End as end:
            if end.partial is not None:
                out.append(end.partial)
            raise _End(PartialArray(out)) from None
        out.append(item)
        i = _skip(text, i)
        if text[i] == "]":
            return out, i + 1
        assert text[i] == ",", f"expected ',' at {i}"
        i += 1


def _value(text: str, i: int) -> tuple[Any, int]:
    i = _skip(text, i)
    if text[i] == "{":
        return _object(text, i)
    if text[i] == "[":
        return _array(text, i)
    if text[i] == '"':
        return _string(text, i)
    value, end = json.JSONDecoder().raw_decode(text, i)  # numbers, true, false, null
    if end >= len(text):
        raise _End(None)  # a literal that ends with the text may be cut (12 of 123): not a complete field
    return value, end


def read_partial(text: str) -> Any:
    """The document as far as the text goes (a complete document comes back as plain JSON values)."""
    try:
        value, _ = _value(text, 0)
    except _End as end:
        return end.partial
    return value


def assert_released_as(seed: Any, full: Any, path: str = "$") -> int:
    """Assert `full` has every field of `seed` exactly as the seed has it; return how many leaves were compared."""
    if isinstance(seed, Prefix):
        assert isinstance(full, str) and full.startswith(seed), f"{path}: {full!r} does not start with {seed!r}"
        return 1
    if isinstance(seed, dict):
        assert isinstance(full, dict), f"{path}: expected an object"
        if not isinstance(seed, PartialObject):
            assert set(full) == set(seed), f"{path}: keys {sorted(set(full) ^ set(seed))} differ"
        missing = [k for k in seed if k not in full]
        assert not missing, f"{path}: released fields {missing} are missing"
        return sum(assert_released_as(v, full[k], f"{path}.{k}") for k, v in seed.items())
    if isinstance(seed, list):
        assert isinstance(full, list), f"{path}: expected an array"
        if not isinstance(seed, PartialArray):
            assert len(full) == len(seed), f"{path}: {len(full)} items, released {len(seed)}"
        else:
            assert len(full) >= len(seed), f"{path}: {len(full)} items, released at least {len(seed)}"
        return sum(assert_released_as(v, full[n], f"{path}[{n}]") for n, v in enumerate(seed))
    assert full == seed, f"{path}: {full!r} differs from the released {seed!r}"
    return 1
