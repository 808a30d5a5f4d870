"""s13's gate: a request whose User-Agent names a bot or agent must carry a valid Web Bot Auth signature.

A browser that does not call itself a bot passes untouched; a named bot without a valid signature gets a
"verify you are human" page (403) that offers nothing a bot could or should solve. The keyid of a signature that
held is left in scope["lab"]["agent_keyid"] (by the rate limit, when it verified it first), so nothing
verifies it twice (a nonce works once).
The lab's receipt keys are not the store's: they stay readable by anyone.

The page says what the gate accepts; the `Nordlys-Gate-Refused` header says why this request was refused ("no
signature", "sig1: keyid is not in the agent's directory", "sig1: outside its time window", a directory the lab
could not fetch, ...), for the harness of a signing agent to tell its own outage from the store's answer. It is a
response header: no page text, nothing a model shown the page sees.
"""

from __future__ import annotations

import logging
import re

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from lab import render
from lab.botauth.limits import limits
from lab.botauth.verifier import Verifier, verified_keyid
from lab.receipts import RECEIPT_KEYS_PATH

BOT_NAMES = re.compile(r"bot|agent|crawler|spider|scraper|gpt|claude|anthropic|openai|perplexity|gemini", re.IGNORECASE)
OPEN_PATHS = frozenset({RECEIPT_KEYS_PATH})
REFUSED_HEADER = b"nordlys-gate-refused"
MAX_REASON = 300
log = logging.getLogger("lab.botgate")


class BotGate:
    def __init__(self, app: ASGIApp, verifier: Verifier) -> None:
        self.app, self.verifier = app, verifier

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        station = scope.get("lab", {}).get("station")
        if scope["type"] != "http" or station is None or not station.has("bot_gate"):
            return await self.app(scope, receive, send)
        if scope["path"] in OPEN_PATHS:
            return await self.app(scope, receive, send)
        headers = Headers(scope=scope)
        if not BOT_NAMES.search(headers.get("user-agent", "")):
            return await self.app(scope, receive, send)
        if await verified_keyid(scope, self.verifier) is None:
            reason = str(scope["lab"].get("signature_rejected", "no signature"))
            log.info("bot gate: %s", reason)
            return await self._gate(send, reason)
        await self.app(scope, receive, send)

    async def _gate(self, send: Send, reason: str) -> None:
        body = render.render_text("gate.html", limits=limits()).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"text/html; charset=utf-8"),
                    (b"cache-control", b"no-store"),
                    (b"content-length", str(len(body)).encode()),
                    (REFUSED_HEADER, header_value(reason)),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def header_value(reason: str) -> bytes:
    """The reason as one header line: printable ASCII only, at most MAX_REASON characters."""
    printable = "".join(c if " " <= c <= "~" else "?" for c in reason)
    return printable[:MAX_REASON].encode("ascii")
