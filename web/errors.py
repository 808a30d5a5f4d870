"""Clear errors: an HTML page for readers, a JSON object for the open-data endpoints.

Handlers raise `NotFound` or `BadRequest` with a sentence that says what was wrong; the reason is escaped like
any other text.
"""

from __future__ import annotations

import logging

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

log = logging.getLogger(__name__)

TITLES = {
    400: "Bad request", 403: "Forbidden", 404: "Not found", 405: "Method not allowed", 413: "Too large",
    415: "Unsupported type", 429: "Too many attempts", 500: "Something broke", 503: "Not available now",
}


class NotFound(HTTPException):
    def __init__(self, detail: str) -> None:
        super().__init__(404, detail)


class BadRequest(HTTPException):
    def __init__(self, detail: str) -> None:
        super().__init__(400, detail)


class Forbidden(HTTPException):
    def __init__(self, detail: str) -> None:
        super().__init__(403, detail)


class ServiceUnavailable(HTTPException):
    """Something the page needs cannot be made now (it may be on a later try)."""

    def __init__(self, detail: str) -> None:
        super().__init__(503, detail)


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path.endswith(".json")


def error_response(request: Request, status: int, detail: str) -> Response:
    headers = {"Cache-Control": "no-store"}
    if wants_json(request):
        error = {"status": status, "title": TITLES.get(status, "Error"), "detail": detail}
        body = msgspec.json.encode({"error": error})
        return Response(body, status_code=status, media_type="application/json", headers=headers)
    site = getattr(request.app.state, "site", None)
    if site is None:
        return Response(f"{status} {detail}\n", status_code=status, media_type="text/plain", headers=headers)
    html = site.renderer.html("error.html", {"status": status, "title": TITLES.get(status, "Error"), "detail": detail})
    return Response(html, status_code=status, media_type="text/html; charset=utf-8", headers=headers)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    detail = exc.detail if exc.status_code != 404 or exc.detail != "Not Found" else "There is no page at this address."
    response = error_response(request, exc.status_code, str(detail))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def server_error(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s", request.url.path, exc_info=exc)
    return error_response(request, 500, "Something broke on our side. It is logged; please try again later.")


handlers = {HTTPException: http_error, Exception: server_error}
