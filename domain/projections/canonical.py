"""Canonical JSON: the one encoding of public documents whose sha256 is published.

Keys are sorted (dict keys and struct fields alike), there is no whitespace, strings are UTF-8, and floats are
refused: shares and rates are written as fixed-decimal strings, so no float formatting can change a hash.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction
from typing import Any

import msgspec

_encoder = msgspec.json.Encoder(order="sorted")


class CanonicalError(ValueError):
    """A value that has no canonical encoding here (a float)."""


def _refuse_floats(value: Any) -> None:
    if isinstance(value, float):
        raise CanonicalError("floats have no canonical form here; write a fixed-decimal string")
    if isinstance(value, dict):
        for item in value.values():
            _refuse_floats(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _refuse_floats(item)


def canonical_bytes(document: Any) -> bytes:
    """The canonical JSON bytes of a document built from dicts, lists, strings, ints, bools and None."""
    _refuse_floats(document)
    return _encoder.encode(document)


def canonical_struct_bytes(value: Any) -> bytes:
    """Canonical JSON of an arbitrary msgspec value (structs, datetimes, UUIDs): sorted keys, no spaces."""
    return _encoder.encode(value)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decimal_text(value: Fraction, places: int = 4) -> str:
    """A share as a fixed-decimal string, rounded half up: 15/17 -> "0.8824"."""
    scaled = value * 10**places
    whole = int(scaled)
    if scaled - whole >= Fraction(1, 2):
        whole += 1
    text = str(whole).rjust(places + 1, "0")
    return f"{text[:-places]}.{text[-places:]}"
