"""A sender that disconnects while its body is read is no error of ours: nothing is logged as one."""

from __future__ import annotations

import logging

import anyio
import pytest


def test_a_disconnect_mid_body_is_not_logged_as_an_unhandled_error(site, caplog: pytest.LogCaptureFixture) -> None:
    app = site.client.app
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": "/api/leaderboard/submit",
        "raw_path": b"/api/leaderboard/submit",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"), (b"content-length", b"5000")],
        "client": ("192.0.2.90", 40000),
        "server": ("testserver", 443),
    }
    messages = [{"type": "http.request", "body": b'{"spec": "arc-', "more_body": True}, {"type": "http.disconnect"}]
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    with caplog.at_level(logging.INFO):
        anyio.run(app, scope, receive, send)  # raised ClientDisconnect after logging it as "unhandled error"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert sent and sent[0]["type"] == "http.response.start" and sent[0]["status"] != 500
