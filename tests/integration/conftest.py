"""One lab server and one Chromium per test session; a fresh browser context (fresh cookies) per test.

Shared by the lab's tests and the receipt tests (a second sync Playwright in one session cannot start), and with
them the agent's Web Bot Auth test signer, built on the independent http-message-signatures package.
Directories with their own `lab` or `browser` (tests/integration/agent) override these.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from http_message_signatures import HTTPMessageSigner, HTTPSignatureKeyResolver, algorithms
from playwright.sync_api import Browser, Page, sync_playwright

from lab.botauth.directory import thumbprint
from lab.server import LabServer

CHROMIUM = "/usr/lib/chromium/chromium"
BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36"


@pytest.fixture(scope="session")
def lab() -> Iterator[LabServer]:
    with LabServer(trust_local_directories=True) as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM if Path(CHROMIUM).exists() else None, args=["--disable-quic"], headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(user_agent=BROWSER_UA)
    context.set_default_timeout(8000)
    yield context.new_page()
    context.close()


class StationClient:
    """httpx against the lab by loopback IP, with the Host header of one station (httpx cannot resolve *.localhost)."""

    def __init__(self, lab: LabServer, station: str | None, user_agent: str = BROWSER_UA) -> None:
        self.host = lab.host_for(station)
        self.client = httpx.Client(
            base_url=lab.loopback_url(),
            headers={"Host": self.host, "User-Agent": user_agent},
            follow_redirects=False,
            timeout=10,
        )

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.client.get(path, **kwargs)

    def post(self, path: str, **kwargs) -> httpx.Response:
        return self.client.post(path, **kwargs)

    def add_to_cart(self, product="aero-run-2", colour="black", size="42", **extra) -> httpx.Response:
        return self.post("/cart/add", data={"product": product, "colour": colour, "size": size, "pairs": "1", **extra})


@pytest.fixture
def client(lab: LabServer):
    """A factory: client("s05") gives a fresh cookie jar on station s05."""
    made: list[StationClient] = []

    def make(station: str | None, user_agent: str = BROWSER_UA) -> StationClient:
        made.append(StationClient(lab, station, user_agent))
        return made[-1]

    yield make
    for station_client in made:
        station_client.client.close()


class AgentKeys:
    """An agent's Ed25519 key and its JWKS directory, served over loopback http."""

    def __init__(self) -> None:
        self.private = Ed25519PrivateKey.generate()
        raw = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.x = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        self.jwks = json.dumps({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": self.x}]}).encode()
        self.origin = ""


@pytest.fixture(scope="session")
def agent_keys() -> Iterator[AgentKeys]:
    keys = AgentKeys()

    class Directory(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if self.path != "/.well-known/http-message-signatures-directory":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/http-message-signatures-directory+json")
            self.send_header("Content-Length", str(len(keys.jwks)))
            self.end_headers()
            self.wfile.write(keys.jwks)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Directory)
    keys.origin = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield keys
    server.shutdown()


# Signing requests as an agent would, with the independent http-message-signatures package.


class _Keys(HTTPSignatureKeyResolver):
    def __init__(self, private) -> None:
        self.private = private

    def resolve_private_key(self, key_id: str):
        return self.private


def signature_headers(
    keys,
    authority: str,
    *,
    agent: str | None = None,
    private=None,
    tag: str | None = "web-bot-auth",
    created: dt.datetime | None = None,
    lifetime_s: int = 60,
    nonce: str | None = None,
    dictionary_form: bool = False,
    components: tuple[str, ...] = ("@authority", "signature-agent"),
    method: str = "GET",
    target: str = "/",
    headers: dict[str, str] | None = None,
) -> dict[str, str]:
    """The Signature-Agent, Signature-Input and Signature headers (and any other `headers` signed) for a
    `method` request to `authority` and `target` (path and query), covering `components`."""
    created = created or dt.datetime.now(dt.UTC)
    origin = f'"{agent or keys.origin}"'
    request = httpx.Request(
        method,
        f"http://{authority}{target}",
        headers={"Signature-Agent": f"sig1={origin}" if dictionary_form else origin, **(headers or {})},
    )
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=_Keys(private or keys.private))
    signer.sign(
        request,
        key_id=thumbprint(keys.x),
        created=created,
        expires=created + dt.timedelta(seconds=lifetime_s),
        nonce=nonce,
        label="sig1",
        tag=tag,
        covered_component_ids=components,
    )
    names = ("Signature-Agent", "Signature-Input", "Signature", *(headers or {}))
    return {name: request.headers[name] for name in names}


def fresh_nonce() -> str:
    return secrets.token_urlsafe(16)


@pytest.fixture
def sign():
    return signature_headers
