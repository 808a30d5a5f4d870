"""The JSON Schema of a leaderboard submission: ARC's own, and ours (ARC's with our course's test set, its station
ids and the lab's receipt allowed), as the MCP tool publishes it and `canitbuy arc export` checks its output."""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

from domain.leaderboards.arc import COURSE_TEST_SET


@cache
def arc_schema() -> dict[str, Any]:
    text = (resources.files("domain") / "testsets" / "arc-submission-v1.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def course_schema() -> dict[str, Any]:
    arc = arc_schema()
    schema = copy.deepcopy(arc)
    schema.pop("$id", None)
    schema["properties"]["test_set"] = {"enum": [arc["properties"]["test_set"]["const"], COURSE_TEST_SET]}
    result = schema["properties"]["results"]["items"]["properties"]
    result["id"] = {"type": "string", "pattern": "^(arc100-v1-[0-9]{3}|s(0[1-9]|1[0-8]))$"}
    result["receipt"] = {"type": "string", "maxLength": 4000,
                         "description": f"{COURSE_TEST_SET} only: the lab's signed checkout receipt (compact JWS)."}
    return schema
