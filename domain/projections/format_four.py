"""Documents format 4: how weeks published before station pass rates counted control-first were written, so they
replay to their bytes.

Format 5 counts a station's pass rate as the score counts a result (course spec 2.1: a station is "counted only
after the control store S01 was passed"; "The obstacle registry and the weekly CanItBuy Index use the same
control-first rule"). Format 4 is exactly format 5 less that:

- each Matrix station's `passed`, `results` and `rate` counted every model's result there, a model that failed
  S01 or that a correction excluded from the week included (format 5: only the models that passed S01 that week
  and no correction excluded; S01's own, every model's S01 result less the excluded ones), as
  `documents._station` writes when `control_first` is false;
- its stations had no `not_counted`;
- it named itself `canitbuy-matrix/4` (and format 3 `canitbuy-matrix/3`). The ranking did not change: format 5
  writes it as format 4 did.

Formats 1 to 3 are built from format 4 (format_two.py, format_one.py). This module is frozen: it changes only if a
format-4 publication is found not to replay, never to move one.
"""

from __future__ import annotations

from typing import Any

_ADDED_TO_STATIONS = ("not_counted",)


def matrix_four(doc: dict[str, Any]) -> dict[str, Any]:
    """A Matrix of format 5's shape (its rates already counted every result) as format 4 wrote it."""
    return {**doc, "stations": [{k: v for k, v in s.items() if k not in _ADDED_TO_STATIONS}
                                for s in doc["stations"]]}
