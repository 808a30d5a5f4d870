"""The small part of RFC 8941 structured fields that Web Bot Auth headers use.

Parsing keeps each member's raw text, because RFC 9421 signs the `@signature-params` line exactly as the
signer serialised it in Signature-Input.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

_KEY = re.compile(r"[a-z*][a-z0-9_.*-]*")
_TOKEN_OR_NUMBER = re.compile(r"-?[0-9]+|[A-Za-z*][A-Za-z0-9:/!#$%&'*+.^_`|~-]*")
MAX_DIGITS = 15
"""RFC 8941: an integer has at most 15 digits (a longer one would also cost time to read)."""


class FieldError(ValueError):
    """A header is not the structured field it should be."""


@dataclass(frozen=True)
class InnerList:
    items: tuple[tuple[str, dict[str, object]], ...]  # each component name with its own parameters
    params: dict[str, object]


def split_members(text: str) -> dict[str, str]:
    """A dictionary header as {key: raw member text}, split on commas outside strings and parentheses."""
    members, depth, quoted, escaped, start = {}, 0, False, False, 0
    for index, char in enumerate(text + ","):
        if quoted:
            escaped, quoted = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            quoted = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "," and depth == 0:
            key, sep, value = text[start:index].strip().partition("=")
            if not _KEY.fullmatch(key) or not sep:
                raise FieldError("bad dictionary member")
            members[key] = value.strip()
            start = index + 1
    if quoted or depth:
        raise FieldError("unterminated string or list")
    return members


def parse_string(text: str) -> tuple[str, str]:
    """A quoted sf-string at the start of text: (value, rest)."""
    if not text.startswith('"'):
        raise FieldError("expected a string")
    out, index = [], 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            if index + 1 >= len(text) or text[index + 1] not in '"\\':
                raise FieldError("bad escape")
            out.append(text[index + 1])
            index += 2
        elif char == '"':
            return "".join(out), text[index + 1 :]
        elif not 0x20 <= ord(char) <= 0x7E:
            raise FieldError("bad character in string")
        else:
            out.append(char)
            index += 1
    raise FieldError("unterminated string")


def serialise_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _params(text: str) -> tuple[dict[str, object], str]:
    params: dict[str, object] = {}
    while text.startswith(";"):
        text = text[1:].lstrip()
        match = _KEY.match(text)
        if not match:
            raise FieldError("bad parameter name")
        key, text = match.group(), text[match.end() :]
        value: object = True
        if text.startswith("="):
            text = text[1:]
            if text.startswith('"'):
                value, text = parse_string(text)
            else:
                bare = _TOKEN_OR_NUMBER.match(text)
                if not bare:
                    raise FieldError("bad parameter value")
                raw, text = bare.group(), text[bare.end() :]
                digits = raw.lstrip("-")
                if digits.isdigit() and len(digits) > MAX_DIGITS:
                    raise FieldError(f"an integer has at most {MAX_DIGITS} digits")
                value = int(raw) if digits.isdigit() else raw
        params[key] = value
    return params, text


def parse_inner_list(text: str) -> InnerList:
    if not text.startswith("("):
        raise FieldError("expected an inner list")
    text, items = text[1:].lstrip(" "), []
    while not text.startswith(")"):
        name, text = parse_string(text)
        item_params, text = _params(text)
        items.append((name, item_params))
        text = text.lstrip(" ")
        if not text:
            raise FieldError("unterminated inner list")
    params, rest = _params(text[1:])
    if rest.strip():
        raise FieldError("trailing text after inner list")
    return InnerList(tuple(items), params)


def parse_bytes(text: str) -> bytes:
    if len(text) < 2 or text[0] != ":" or text[-1] != ":":
        raise FieldError("expected a byte sequence")
    try:
        return base64.b64decode(text[1:-1], validate=True)
    except ValueError as error:
        raise FieldError("bad base64 in byte sequence") from error
