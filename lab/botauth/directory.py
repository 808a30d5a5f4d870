"""Fetching an agent's key directory (`/.well-known/http-message-signatures-directory`), carefully.

The lab fetches whatever origin a request names, so the fetch is bounded: https only (plain http only to
loopback, and only when the lab is started with --trust-local-directories), no redirects, a short timeout,
at most 64 KB, and a cache so a busy agent costs one fetch every few minutes.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import time
from urllib.parse import urlsplit

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

WELL_KNOWN = "/.well-known/http-message-signatures-directory"
MAX_BYTES = 64 * 1024
TIMEOUT_S = 3.0
TTL_S = 300.0
FAILURE_TTL_S = 10.0  # a failing directory is not asked again at once


class DirectoryError(Exception):
    """The directory could not be fetched or read; the request meets the gate."""


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def thumbprint(x: str) -> str:
    """RFC 7638 JWK SHA-256 thumbprint of an Ed25519 OKP key, base64url without padding."""
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).decode().rstrip("=")


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def directory_url(agent: str, trust_local: bool) -> str:
    parts = urlsplit(agent)
    host = (parts.hostname or "").lower()
    if not host or parts.username or parts.password:
        raise DirectoryError("Signature-Agent is not an origin")
    allowed = parts.scheme == "https" or (parts.scheme == "http" and trust_local and _is_loopback(host))
    if not allowed:
        raise DirectoryError("directory must be https (or loopback http when trusted)")
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}"


def _keys(document: bytes) -> dict[str, Ed25519PublicKey]:
    keys: dict[str, Ed25519PublicKey] = {}
    try:
        entries = json.loads(document).get("keys", [])
        for jwk in entries if isinstance(entries, list) else []:
            if isinstance(jwk, dict) and jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
                x = str(jwk.get("x", ""))
                keys[thumbprint(x)] = Ed25519PublicKey.from_public_bytes(b64url_decode(x))
    except (ValueError, AttributeError) as error:
        raise DirectoryError("directory is not a JWKS of Ed25519 keys") from error
    return keys


class KeyDirectory:
    def __init__(self, trust_local: bool = False) -> None:
        self.trust_local = trust_local
        self._cache: dict[str, tuple[float, dict[str, Ed25519PublicKey] | None]] = {}

    async def keys(self, agent: str) -> dict[str, Ed25519PublicKey]:
        url = directory_url(agent, self.trust_local)
        cached = self._cache.get(url)
        if cached and cached[0] > time.monotonic():
            if cached[1] is None:
                raise DirectoryError("directory failed recently")
            return cached[1]
        try:
            keys = _keys(await self._fetch(url))
        except (DirectoryError, httpx.HTTPError) as error:
            self._cache[url] = (time.monotonic() + FAILURE_TTL_S, None)
            raise DirectoryError(str(error)) from error
        self._cache[url] = (time.monotonic() + TTL_S, keys)
        return keys

    async def _fetch(self, url: str) -> bytes:
        client = httpx.AsyncClient(timeout=TIMEOUT_S, follow_redirects=False, trust_env=False)
        async with client, client.stream("GET", url, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                raise DirectoryError(f"directory answered {response.status_code}")
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_BYTES:
                    raise DirectoryError("directory is larger than 64 KB")
            return body
