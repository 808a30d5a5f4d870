"""ASGI middleware in front of every station: which station a Host names, and how large a body may be."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lab import render
from lab.stations import Station

MAX_BODY = 16 * 1024  # the largest form of the store is far smaller


def host_name(scope: Scope) -> str:
    for key, value in scope.get("headers", []):
        if key == b"host":
            return value.decode("latin-1").strip().lower().rsplit(":", 1)[0] if b"]" not in value else ""
    return ""


async def _html(send: Send, status: int, html: str) -> None:
    body = html.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class HostRouter:
    """Puts the station named by the Host header into scope["lab"]; the bare domain is the lab index."""

    def __init__(self, app: ASGIApp, domain: str, stations: dict[str, Station]) -> None:
        self.app, self.domain, self.stations = app, domain.lower(), stations

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        host = host_name(scope)
        label, _, rest = host.partition(".")
        if host == self.domain:
            scope["lab"] = {"station": None, "index": True}
        elif rest == self.domain and label in self.stations:
            scope["lab"] = {"station": self.stations[label], "index": False}
        else:
            html = render.render_text(
                "error.html", title="No such station", message="This address names no station of the CanItBuy lab."
            )
            return await _html(send, 404, html)
        await self.app(scope, receive, send)


class BodyLimit:
    """Reads a request body up to MAX_BODY and answers 413 beyond it, before any handler sees it."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                html = render.render_text(
                    "error.html", title="Too much data", message="This request is larger than any form of this store."
                )
                return await _html(send, 413, html)
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)
