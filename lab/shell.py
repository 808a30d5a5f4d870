"""s11: every page leaves the server as an empty shell; the browser builds it from a JSON API.

The middleware answers a navigation with the shell, and answers `/api/page?path=...` with the page the
control store would have sent, wrapped in JSON. shell.js puts that page into the document, so the built page
is the same page as s01's, only later and only with JavaScript.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SHELL = (
    b'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    b'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>NORDLYS</title>\n'
    b'<link rel="stylesheet" href="/static/lab.css">\n</head>\n<body>\n<div id="app"></div>\n'
    b'<script src="/static/shell.js"></script>\n</body>\n</html>\n'
)
RawHeaders = list[tuple[bytes, bytes]]
# The page's cookies, and the receipt the checkout signed, go with the shell and the JSON page alike.
PASSED_HEADERS = (b"set-cookie", b"nordlys-receipt")


class Shell:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        station = scope.get("lab", {}).get("station")
        if scope["type"] != "http" or station is None or not station.has("browser_built"):
            return await self.app(scope, receive, send)
        if scope["path"] == "/api/page" and scope["method"] == "GET":
            return await self._page(scope, receive, send)
        if scope["method"] == "GET":
            return await self._shell_or_pass(scope, receive, send)
        await self.app(scope, receive, send)

    async def _shell_or_pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        """HTML pages become the shell; redirects, errors and non-HTML answers pass as they are."""
        start: Message = {}
        mode = ""

        async def capture(message: Message) -> None:
            nonlocal start, mode
            if message["type"] == "http.response.start":
                start = message
                return
            if not mode:
                content_type = Headers(raw=start["headers"]).get("content-type", "")
                mode = "shell" if start["status"] == 200 and content_type.startswith("text/html") else "pass"
                if mode == "pass":
                    await send(start)
            if mode == "pass":
                await send(message)
            elif not message.get("more_body"):
                passed = [(k, v) for k, v in start["headers"] if k in PASSED_HEADERS]
                await _send(send, 200, "text/html; charset=utf-8", SHELL, passed)

        await self.app(scope, receive, capture)

    async def _page(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qs(scope["query_string"].decode())
        target = urlsplit(query.get("path", ["/"])[0])
        if not target.path.startswith("/") or target.path.startswith("/api/page"):
            return await _send(send, 400, "application/json", b'{"error":"bad path"}')
        inner = dict(scope, path=target.path, raw_path=target.path.encode(), query_string=target.query.encode())
        inner["lab_signed_target"] = (scope.get("raw_path") or scope["path"].encode(), scope["query_string"])
        status, headers, body = 500, [], b""

        async def collect(message: Message) -> None:
            nonlocal status, headers, body
            if message["type"] == "http.response.start":
                status, headers = message["status"], message["headers"]
            else:
                body += message.get("body", b"")

        await self.app(inner, receive, collect)
        location = Headers(raw=headers).get("location")
        payload = {"status": status, "redirect": location, "html": body.decode("utf-8", "replace")}
        passed = [(k, v) for k, v in headers if k in PASSED_HEADERS]
        await _send(send, 200, "application/json", json.dumps(payload).encode(), passed)


async def _send(send: Send, status: int, media: str, body: bytes, extra: RawHeaders | None = None) -> None:
    headers = [
        (b"content-type", media.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ] + (extra or [])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
