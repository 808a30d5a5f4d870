"""Receipts: the lab's signed word that a checkout opened, for whoever wants to check a run without re-running it.

A receipt is a compact JWS (RFC 7515) signed with the lab's own Ed25519 key (`alg` EdDSA, RFC 8037). Its `kid`
is the RFC 7638 thumbprint of the key, and the lab publishes the public key as a JWKS at RECEIPT_KEYS_PATH on
the bare domain and every station. The payload carries the order marker itself and its sha256 over canonical
JSON, so a verifier can check the digest without trusting the page it was read from.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from lab.botauth.directory import b64url_decode, thumbprint

RECEIPT_KEYS_PATH = "/.well-known/nordlys-receipt-keys"
RECEIPT_HEADER = "Nordlys-Receipt"
TYP = "nordlys-receipt+jws"
ISSUER = "nordlys-lab"
COURSE = "2.1"
SEED_BYTES = 32


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def canonical(value: object) -> bytes:
    """Sorted keys, no whitespace, UTF-8 as is: the bytes whose sha256 is `order_sha256`."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def order_sha256(order: object) -> str:
    return hashlib.sha256(canonical(order)).hexdigest()


class ReceiptKey:
    """The lab's signing key: from a 32-byte seed (stable across restarts) or made for this process."""

    def __init__(self, seed: bytes | None = None) -> None:
        if seed is not None and len(seed) != SEED_BYTES:
            raise ValueError("a receipt key is a 32-byte Ed25519 seed")
        self._private = Ed25519PrivateKey.from_private_bytes(seed) if seed else Ed25519PrivateKey.generate()
        raw = self._private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.x = b64url(raw)
        self.kid = thumbprint(self.x)

    def jwks(self) -> dict[str, object]:
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": self.x, "kid": self.kid, "alg": "EdDSA", "use": "sig"}
        return {"keys": [jwk]}

    def sign(self, payload: dict[str, object]) -> str:
        header = {"alg": "EdDSA", "kid": self.kid, "typ": TYP}
        signing_input = f"{b64url(canonical(header))}.{b64url(canonical(payload))}"
        return f"{signing_input}.{b64url(self._private.sign(signing_input.encode('ascii')))}"

    def receipt(self, station: str, host: str, order: dict[str, object], agent_keyid: str | None) -> str:
        return self.sign(
            {
                "iss": ISSUER,
                "station": station,
                "course": COURSE,
                "host": host,
                "iat": int(time.time()),
                "jti": secrets.token_urlsafe(16),
                "order": order,
                "order_sha256": order_sha256(order),
                "agent_keyid": agent_keyid,
            }
        )


def load_or_create_seed(path: Path) -> bytes:
    """The seed kept in `path` as base64url text, made once (mode 0600) if the file does not exist yet."""
    if path.exists():
        seed = b64url_decode(path.read_text().strip())
        if len(seed) != SEED_BYTES:
            raise ValueError(f"{path} does not hold a base64url 32-byte Ed25519 seed")
        return seed
    seed = secrets.token_bytes(SEED_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Two lab processes starting at once: each writes its own under a temporary name (mode 0600) and links it
    # into place; the second link fails, and that process reads the first one's whole file.
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(b64url(seed) + "\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            return load_or_create_seed(path)
        return seed
    finally:
        os.unlink(temporary)
