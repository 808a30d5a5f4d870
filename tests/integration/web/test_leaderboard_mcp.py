"""The MCP server at /api/ask: tools/list, tools/call (an id or the problem) and JSON-RPC errors, over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import jsonschema
import pytest
from leaderboard_site import a_run, body, from_network, site_on_backend

ASK = "/api/ask"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    yield from site_on_backend(request, tmp_path_factory)


def rpc(client, method: str, params: dict | None = None, id_: int | None = 1, address: str = "192.0.2.50") -> dict:
    message: dict = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if id_ is not None:
        message["id"] = id_
    response = from_network(client, address).post(ASK, content=json.dumps(message).encode(),
                                                  headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    assert response.headers["etag"]
    return response.json()


def test_initialize_names_the_server_and_its_tools_capability(client) -> None:
    answer = rpc(client, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "test", "version": "1"}})
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"]["capabilities"] == {"tools": {"listChanged": False}}


def test_a_notification_is_accepted_without_an_answer(client) -> None:
    message = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(ASK, content=json.dumps(message).encode()).status_code == 202


def test_tools_list_offers_submit_leaderboard_run_with_arcs_schema(client) -> None:
    tools = rpc(client, "tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["submit_leaderboard_run"]
    schema = tools[0]["inputSchema"]
    assert schema["properties"]["spec"] == {"const": "arc-leaderboard-submission/v1"}
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(a_run("schema"), schema)


def test_tools_call_submits_and_answers_the_id(client) -> None:
    answer = rpc(client, "tools/call", {"name": "submit_leaderboard_run", "arguments": a_run("mcp")})
    result = answer["result"]
    assert result["isError"] is False and result["structuredContent"]["http_status"] == 201
    sid = result["structuredContent"]["id"]
    assert json.loads(result["content"][0]["text"])["id"] == sid
    over_http = from_network(client, "192.0.2.51").post("/api/leaderboard/submit", content=body(a_run("mcp")))
    assert (over_http.status_code, over_http.json()["id"]) == (200, sid)  # the same run: the first id


def test_tools_call_answers_the_first_problem_as_an_error_result(client) -> None:
    arguments = a_run("mcp problem")
    arguments["run"]["stopped_before_payment"] = False
    result = rpc(client, "tools/call", {"name": "submit_leaderboard_run", "arguments": arguments})["result"]
    assert result["isError"] is True and result["structuredContent"]["http_status"] == 400
    assert "run.stopped_before_payment must be true" in result["content"][0]["text"]


def test_a_body_that_is_not_json_is_a_parse_error(client) -> None:
    answer = client.post(ASK, content=b'{"jsonrpc": "2.0", "method": ').json()
    assert answer["error"]["code"] == -32700 and answer["id"] is None


def test_an_object_that_is_not_a_request_is_an_invalid_request(client) -> None:
    assert client.post(ASK, content=b'{"jsonrpc": "1.0", "id": 3}').json()["error"]["code"] == -32600
    assert client.post(ASK, content=b"[]").json()["error"]["code"] == -32600


def test_an_unknown_method_is_method_not_found(client) -> None:
    answer = rpc(client, "resources/list", {}, id_=7)
    assert answer["error"]["code"] == -32601 and answer["id"] == 7


def test_an_unknown_tool_or_arguments_that_are_not_an_object_are_invalid_params(client) -> None:
    assert rpc(client, "tools/call", {"name": "buy_everything", "arguments": {}})["error"]["code"] == -32602
    assert rpc(client, "tools/call", {"name": "submit_leaderboard_run", "arguments": [1]})["error"]["code"] == -32602
    assert rpc(client, "tools/call", [1])["error"]["code"] == -32602  # type: ignore[arg-type]


def call(client, arguments_json: str, address: str, id_json: str = "1") -> tuple[int, dict]:
    """tools/call with the arguments as written (JSON text), so a test can send what json.dumps will not make."""
    message = ('{"jsonrpc": "2.0", "id": ' + id_json + ', "method": "tools/call", "params": '
               '{"name": "submit_leaderboard_run", "arguments": ' + arguments_json + "}}")
    response = from_network(client, address).post(ASK, content=message.encode(),
                                                  headers={"content-type": "application/json"})
    return response.status_code, response.json()


def test_a_lone_surrogate_in_the_arguments_is_taken_as_the_submit_endpoint_takes_it(client) -> None:
    """A lone surrogate ("x\\ud800") is valid JSON (ARC's JSON.parse reads it, its validator takes it): the tool
    and the submit endpoint store it alike (as U+FFFD), the same run, where the tool answered 500 (it encoded the
    arguments again, and UTF-8 has no lone surrogates)."""
    arguments = a_run("lone surrogate")
    arguments["agent"]["name"] = "x\ud800"
    status, answer = call(client, json.dumps(arguments), "192.0.2.60")  # json.dumps writes "x\ud800" escaped
    assert status == 200
    result = answer["result"]
    assert result["isError"] is False and result["structuredContent"]["http_status"] == 201
    over_http = from_network(client, "192.0.2.61").post("/api/leaderboard/submit", content=body(arguments))
    assert (over_http.status_code, over_http.json()["id"]) == (200, result["structuredContent"]["id"])


def test_nan_in_the_arguments_is_not_json_for_the_tool_as_for_the_submit_endpoint(client) -> None:
    """`"steps": NaN` is not JSON: JSON.parse refuses it and so does the submit endpoint (400, ARC's first
    message); the tool, which took it (the steps dropped as not a number), answers a JSON-RPC parse error."""
    for constant in ["NaN", "Infinity", "-Infinity"]:
        arguments = json.dumps(a_run(f"constant {constant}")).replace('"outcome": "no_cart"',
                                                                      f'"outcome": "no_cart", "steps": {constant}', 1)
        assert constant in arguments
        over_http = from_network(client, "192.0.2.62").post("/api/leaderboard/submit", content=arguments.encode())
        assert over_http.status_code == 400
        assert over_http.json()["error"]["detail"] == "Send a JSON object. See /leaderboard/spec."
        status, answer = call(client, arguments, "192.0.2.63")
        assert status == 400 and answer["error"]["code"] == -32700 and "result" not in answer


def test_an_id_or_method_with_a_lone_surrogate_is_answered_not_a_500(client) -> None:
    """A JSON-RPC id and method are echoed in the answer; UTF-8 cannot carry a lone surrogate, so the answer is
    written with escapes and the id comes back as it was sent."""
    status, answer = call(client, "[1]", "192.0.2.64", id_json='"\\ud800"')
    assert status == 200 and answer["id"] == "\ud800" and answer["error"]["code"] == -32602
    message = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/\\udc00"}'
    response = from_network(client, "192.0.2.64").post(
        ASK, content=message, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200 and response.json()["error"]["code"] == -32601
