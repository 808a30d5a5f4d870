"""Web Bot Auth: the agent signs its requests (RFC 9421 HTTP Message Signatures, Ed25519) so stores can tell it
is who it says it is, and serves its public key at a well-known directory.

Signing strategy: the browser sends one signature per step as extra headers, valid for a short window and
without a nonce. Signing each request through request interception would cost 10-13 ms a request and turn off
the HTTP cache; a nonce-less signature within its window is what the drafts allow for this.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.private_files import write_once

DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"
DIRECTORY_TYPE = "application/http-message-signatures-directory+json"
KEY_FILE = "agent-signing-key"
WINDOW_SECONDS = 60


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.endswith(".localhost") or host.startswith("127.")


def signing_problem(lab_url: str | None, directory_url: str | None) -> str | None:
    """Why runs against this lab could not be signed so that it verifies them, or None when they can.

    A lab fetches the key directory that a signature names: over https, or over plain http from loopback only
    when it trusts local directories (the in-process lab does, and so may a lab on this machine). Without a
    directory it can reach, every run meets s13's gate unsigned: our configuration, never the model's failure.
    With no lab URL the lab is started in-process and serves a local directory itself: nothing to check here.
    """
    if not lab_url:
        return None
    if not directory_url:
        return (
            f"CANITBUY_AGENT_DIRECTORY_URL is not set: the lab at {lab_url} could not verify the agent's "
            "signatures, so every run would meet s13's bot gate unsigned"
        )
    scheme = urlsplit(directory_url).scheme
    if scheme == "https" or (scheme == "http" and _loopback(directory_url) and _loopback(lab_url)):
        return None
    return (
        f"CANITBUY_AGENT_DIRECTORY_URL={directory_url} cannot be reached by the lab at {lab_url}: "
        "it must be https (plain http only when both are on this machine)"
    )


def load_or_create_key(seed: str | None, data_dir: Path) -> Ed25519PrivateKey:
    """The key from settings, else the one kept in the data dir (made once, readable by us alone)."""
    from adapters.settings import SettingsError, check_signing_key

    if seed:
        return Ed25519PrivateKey.from_private_bytes(_unb64url(seed))
    path = data_dir / KEY_FILE
    if path.exists():
        try:
            stored = check_signing_key(path.read_text().strip(), f"the agent's key file {path}") or ""
        except UnicodeDecodeError:
            raise SettingsError(
                f"the agent's key file {path} must be a base64url Ed25519 private key, not binary"
            ) from None
        return Ed25519PrivateKey.from_private_bytes(_unb64url(stored))
    raw = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    kept = write_once(path, b64url(raw).encode())  # another process may have made it first: theirs is used
    return Ed25519PrivateKey.from_private_bytes(_unb64url(kept.decode().strip()))


def public_jwk(key: Ed25519PrivateKey) -> dict[str, str]:
    x = b64url(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    return {"kty": "OKP", "crv": "Ed25519", "x": x}


def thumbprint(jwk: dict[str, str]) -> str:
    """RFC 7638: sha256 over the required members in lexicographic order, no whitespace, base64url."""
    required = {k: jwk[k] for k in ("crv", "kty", "x")}
    canonical = json.dumps(required, sort_keys=True, separators=(",", ":")).encode()
    return b64url(hashlib.sha256(canonical).digest())


def keyid_of(key: Ed25519PrivateKey) -> str:
    """The keyid our signatures carry (and the lab gives its own agent's budget to)."""
    return thumbprint(public_jwk(key))


def directory_document(key: Ed25519PrivateKey) -> bytes:
    jwk = public_jwk(key)
    return json.dumps({"keys": [{**jwk, "kid": thumbprint(jwk), "use": "sig"}]}).encode()


class BotAuthSigner:
    """Makes the Signature, Signature-Input and Signature-Agent headers for one authority."""

    def __init__(
        self,
        key: Ed25519PrivateKey,
        directory_origin: str,
        *,
        window: int = WINDOW_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key = key
        self._agent = f'"{directory_origin.rstrip("/")}"'
        self.keyid = thumbprint(public_jwk(key))
        self._window = window
        self._clock = clock

    def headers(self, authority: str, *, nonce: str | None = None, now: float | None = None) -> dict[str, str]:
        created = int(self._clock() if now is None else now)
        params = (
            f'("@authority" "signature-agent");created={created};expires={created + self._window};'
            f'keyid="{self.keyid}";alg="ed25519"'
        )
        if nonce:
            params += f';nonce="{nonce}"'
        params += ';tag="web-bot-auth"'
        base = f'"@authority": {authority.lower()}\n"signature-agent": {self._agent}\n"@signature-params": {params}'
        signature = base64.b64encode(self._key.sign(base.encode())).decode()
        return {
            "Signature-Agent": self._agent,
            "Signature-Input": f"sig1={params}",
            "Signature": f"sig1=:{signature}:",
        }


def directory_app(key: Ed25519PrivateKey) -> Starlette:
    """Serves our key directory; the public site mounts it later, tests and local runs serve it on loopback."""
    body = directory_document(key)

    async def directory(request: Request) -> Response:
        return Response(body, media_type=DIRECTORY_TYPE, headers={"Cache-Control": "max-age=86400"})

    return Starlette(routes=[Route(DIRECTORY_PATH, directory)])
