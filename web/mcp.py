"""An MCP server at `POST /api/ask` (JSON-RPC 2.0 over streamable HTTP, stateless, JSON answers only).

Methods: `initialize`, `ping`, `tools/list` (one tool, `submit_leaderboard_run`, whose inputSchema is ARC's
submission schema, widened to our course's test set and ids and to lab receipts) and `tools/call`. The tool takes
the submission object as its arguments and answers as `POST /api/leaderboard/submit` does, inside the tool
result: the same body as structured content and as text, `isError` true with the problem (400 or 429).

The request is read as `POST /api/leaderboard/submit` reads its body (`arc_validation.read_json`: NaN and Infinity
are not JSON, as for `JSON.parse`) and the arguments go to the same checks as a body's object
(`arc_validation.check_submission`), never encoded again: the same values get the same answers, a lone surrogate
("\ud800", valid JSON) included. Answers are JSON in ASCII, so an id sent with one is echoed as it came.

Only `Content-Type: application/json` is taken (else -32600 with HTTP 415), so no other site can make a visitor's
browser call the tool. Protocol errors are JSON-RPC errors: -32700 not JSON (or nested too deep to read), -32600
not a request (batches included), both with HTTP 400; -32601 unknown method, -32602 bad params (unknown tool,
arguments not an object). Notifications get 202 and no body.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.leaderboards.arc import COURSE_TEST_SET, MAX_BYTES
from domain.leaderboards.arc_schema import course_schema
from domain.leaderboards.arc_validation import NotJson, read_json
from web.site import Site
from web.submissions import bounded_body, client_address, flooded, is_json, take_read

PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
TOOL = "submit_leaderboard_run"
MAX_REQUEST = MAX_BYTES + 8 * 1024
"""The submission's 200 KB and room for the JSON-RPC envelope."""


def tool() -> dict[str, Any]:
    return {
        "name": TOOL,
        "title": "Submit a leaderboard run",
        "description": "Submit an agent's run in ARC's arc-leaderboard-submission/v1 format (ARC-100 v1 or "
                       f"{COURSE_TEST_SET}). Answers with the submission's id, or the first problem found. "
                       "Listed as unverified until staff verify it. At most 5 a network a day.",
        "inputSchema": course_schema(),
    }


class RpcError(Exception):
    def __init__(self, code: int, message: str, id_: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.id = code, message, id_


def _reply(id_: Any, result: Any) -> Response:
    return _json({"jsonrpc": "2.0", "id": id_, "result": result})


def _error(error: RpcError, status: int = 200) -> Response:
    return _json({"jsonrpc": "2.0", "id": error.id, "error": {"code": error.code, "message": error.message}}, status)


def _json(body: dict[str, Any], status: int = 200) -> Response:
    # ASCII with escapes: an id or method the client sent with a lone surrogate ("\ud800", valid JSON) is echoed
    # as it was sent, where UTF-8 cannot carry it.
    data = json.dumps(body, separators=(",", ":")).encode()
    etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
    return Response(data, status_code=status, media_type="application/json",
                    headers={"Cache-Control": "no-store", "ETag": etag})


def _request(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_REQUEST:
        raise RpcError(-32600, f"the request is larger than {MAX_REQUEST} bytes (a submission is at most 200 KB)")
    try:  # read as the submit endpoint reads its body, so the arguments are the values a body would be
        message = read_json(raw)
    except NotJson:
        raise RpcError(-32700, "parse error: the body is not JSON (NaN and Infinity are not JSON)") from None
    if isinstance(message, list):
        raise RpcError(-32600, "invalid request: batches are not supported; send one request")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        raise RpcError(-32600, 'invalid request: need an object with "jsonrpc": "2.0" and a "method" string',
                       _id_of(message))
    if "id" in message and _id_of(message) is None and message["id"] is not None:
        raise RpcError(-32600, "invalid request: id must be a string or a number")
    params = message.get("params", {})
    if not isinstance(params, dict):
        raise RpcError(-32602, "invalid params: params must be an object", message.get("id"))
    return message


def _id_of(message: Any) -> str | int | None:
    """The request's id when it is one JSON-RPC allows (a string or an integer), to echo; None otherwise."""
    id_ = message.get("id") if isinstance(message, dict) else None
    return id_ if isinstance(id_, str | int) and not isinstance(id_, bool) else None


async def _call(site: Site, request: Request, params: dict[str, Any], id_: Any) -> dict[str, Any]:
    if params.get("name") != TOOL:
        raise RpcError(-32602, f"invalid params: unknown tool {params.get('name')!r}; the tool is {TOOL}", id_)
    arguments = params.get("arguments")
    if not isinstance(arguments, dict):
        raise RpcError(-32602, "invalid params: arguments must be the submission object", id_)
    answer = await take_read(site, arguments, _size(arguments), client_address(request))
    return {
        "content": [{"type": "text", "text": msgspec.json.encode(answer.body).decode()}],
        "structuredContent": {"http_status": answer.status, **answer.body},
        "isError": answer.status >= 400,
    }


def _size(arguments: dict[str, Any]) -> int:
    """The arguments' bytes as compact UTF-8 JSON, for the 200 KB limit (a lone surrogate counts its 3 bytes)."""
    return len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    asked = params.get("protocolVersion")
    return {
        "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "canitbuy", "title": "CanItBuy", "version": "1"},
        "instructions": f"Call {TOOL} with an arc-leaderboard-submission/v1 object to submit an agent's run.",
    }


async def ask(request: Request) -> Response:
    site: Site = request.app.state.site
    if not is_json(request):
        return _error(RpcError(-32600, "invalid request: Content-Type must be application/json"), 415)
    if (refused := await flooded(site, request)) is not None:  # before the body is read
        return refused
    try:
        message = _request(await bounded_body(request, MAX_REQUEST))
    except RpcError as error:  # not JSON or not a request: MCP answers these with HTTP 400
        return _error(error, 400 if error.code in (-32700, -32600) else 200)
    method, params, id_ = message["method"], message.get("params", {}), message.get("id")
    if "id" not in message:  # a notification (e.g. notifications/initialized): nothing to answer
        return Response(status_code=202)
    try:
        if method == "initialize":
            return _reply(id_, _initialize(params))
        if method == "ping":
            return _reply(id_, {})
        if method == "tools/list":
            return _reply(id_, {"tools": [tool()]})
        if method == "tools/call":
            return _reply(id_, await _call(site, request, params, id_))
        raise RpcError(-32601, f"method not found: {method}", id_)
    except RpcError as error:
        return _error(error)


routes = [Route("/api/ask", ask, methods=["POST"])]
