"""A JSON number past a double's range is Infinity, as ARC's JSON.parse reads it, at the submit endpoint and the
MCP tool alike: `steps` and `seconds` out of range are dropped and an unknown field is ignored, never a 500."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import pytest
from leaderboard_site import a_run, from_network, site_on_backend

SUBMIT = "/api/leaderboard/submit"
# 309 digits is the first integer past a double's range; 4,301 digits is past Python's int() limit for text.
NETWORKS = itertools.count(10)  # a network (/24) of its own for each call: five submissions a network a day
HUGE = ["9" * 309, "-" + "9" * 400, "9" * 4301, "1" + "0" * 5000]


@pytest.fixture(scope="module", params=["sqlite"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    yield from site_on_backend(request, tmp_path_factory)


def with_number(notes: str, field: str, number: str) -> str:
    text = json.dumps(a_run(notes))
    if field == "x":
        return text.replace('{"spec": ', '{"x": ' + number + ', "spec": ', 1)
    return text.replace('"outcome": "no_cart"', f'"outcome": "no_cart", "{field}": {number}', 1)


def tool_call(client, arguments_json: str, address: str) -> dict:
    message = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
        '{"name": "submit_leaderboard_run", "arguments": ' + arguments_json + "}}"
    )
    response = from_network(client, address).post(
        "/api/ask", content=message.encode(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 200, response.text
    return response.json()["result"]


@pytest.mark.parametrize("field", ["x", "steps", "seconds"])
@pytest.mark.parametrize("number", HUGE, ids=lambda n: f"{len(n)}chars")
def test_a_number_past_a_doubles_range_is_infinity_and_the_run_is_taken(client, field: str, number: str) -> None:
    notes = f"huge {field} {len(number)}{number[0]}"
    text = with_number(notes, field, number)
    assert number in text
    over_http = from_network(client, f"203.{next(NETWORKS)}.113.7").post(SUBMIT, content=text.encode())
    assert over_http.status_code == 201, over_http.text
    result = tool_call(client, text, f"203.{next(NETWORKS)}.113.7")
    assert result["isError"] is False and result["structuredContent"]["http_status"] == 200
    assert result["structuredContent"]["id"] == over_http.json()["id"]  # the same run, the first id


def test_a_huge_number_where_a_string_is_wanted_is_the_first_problem_for_both(client) -> None:
    data = a_run("huge name")
    text = json.dumps(data).replace('"name": "Nordic Shopper"', '"name": ' + "9" * 500, 1)
    over_http = from_network(client, "192.0.2.72").post(SUBMIT, content=text.encode())
    assert over_http.status_code == 400 and over_http.json()["error"]["detail"] == "agent.name must be a string."
    result = tool_call(client, text, "192.0.2.73")
    assert result["isError"] is True and result["structuredContent"]["http_status"] == 400
    assert "agent.name must be a string." in result["content"][0]["text"]
