"""What receipt checking needs from the outside world: an Ed25519 check (cryptography) and the lab's keys (httpx).

The keys are fetched from the lab the caller trusts (our lab's address from settings), never from the host a
receipt names: a receipt only proves something when it verifies under keys that came from elsewhere.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.leaderboards.receipts import ReceiptCheck, ReceiptRefused, verify_receipt

RECEIPT_KEYS_PATH = "/.well-known/nordlys-receipt-keys"
MAX_JWKS_BYTES = 64 * 1024
TIMEOUT_S = 5.0
REFETCH_AFTER_S = 60.0


class ReceiptKeysError(Exception):
    """The lab's receipt keys could not be fetched or are not a JWKS."""


def cryptography_ed25519_check(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """domain.leaderboards.receipts.Ed25519Check made of `cryptography`."""
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def _target(lab_origin: str) -> tuple[str, dict[str, str]]:
    """The URL to connect to and the headers to send: *.localhost names are reached on 127.0.0.1 by Host."""
    parts = urlsplit(lab_origin)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise ReceiptKeysError(f"not an http(s) origin: {lab_origin!r}")
    if host == "localhost" or host.endswith(".localhost"):
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://127.0.0.1{port}{RECEIPT_KEYS_PATH}", {"Host": parts.netloc}
    return f"{parts.scheme}://{parts.netloc}{RECEIPT_KEYS_PATH}", {}


async def fetch_receipt_keys(
    lab_origin: str, *, timeout_s: float = TIMEOUT_S, max_bytes: int = MAX_JWKS_BYTES
) -> dict[str, Any]:
    """The JWKS a lab publishes at RECEIPT_KEYS_PATH (no redirects, bounded in time and size)."""
    url, headers = _target(lab_origin)
    headers["Accept"] = "application/jwk-set+json, application/json"
    try:
        async with (
            httpx.AsyncClient(timeout=timeout_s, follow_redirects=False, trust_env=False) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            if response.status_code != 200:
                raise ReceiptKeysError(f"{url} answered {response.status_code}")
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise ReceiptKeysError(f"{url} sent more than {max_bytes} bytes")
    except httpx.HTTPError as error:
        raise ReceiptKeysError(f"{url}: {error}") from error
    try:
        jwks = json.loads(body)
    except ValueError as error:
        raise ReceiptKeysError(f"{url} did not send JSON") from error
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
        raise ReceiptKeysError(f"{url} did not send a JWKS")
    return jwks


class HttpxReceiptVerifier:
    """Checks receipts against one trusted lab's published keys, fetched once and kept (refetched at most once a
    minute when a receipt names a key not in them: the lab may have a new key)."""

    def __init__(self, lab_origin: str) -> None:
        self.lab_origin = lab_origin
        self._jwks: dict[str, Any] | None = None
        self._fetched_at = 0.0

    async def keys(self, refresh: bool = False) -> dict[str, Any]:
        if self._jwks is None or (refresh and time.monotonic() - self._fetched_at > REFETCH_AFTER_S):
            self._jwks = await fetch_receipt_keys(self.lab_origin)
            self._fetched_at = time.monotonic()
        return self._jwks

    async def verify(self, compact: str, station: str | None = None) -> ReceiptCheck:
        result = verify_receipt(compact, await self.keys(), cryptography_ed25519_check, station)
        if isinstance(result, ReceiptRefused) and result.reason == "unknown_key":
            result = verify_receipt(compact, await self.keys(refresh=True), cryptography_ed25519_check, station)
        return result
