"""Checking a lab receipt: the lab's signed statement that a checkout opened, with the order it showed.

A receipt is a compact JWS (`alg` EdDSA, `typ` nordlys-receipt+jws, `kid` the RFC 7638 thumbprint of the lab's
Ed25519 key). Its payload names the station and host, the time, the order marker and its sha256 over canonical
JSON, and the Web Bot Auth keyid of the agent when its checkout request was signed. A receipt is accepted only
when its shape is right, its key is in the JWKS the caller trusts, its signature holds and the digest matches
the order it carries. Pure: the Ed25519 check is given as a callable, the JWKS as a dict already fetched.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal, Protocol

import msgspec

TYP = "nordlys-receipt+jws"
ISSUER = "nordlys-lab"
MAX_RECEIPT_CHARS = 16_384

RefusalReason = Literal["malformed", "unknown_key", "bad_signature", "order_digest_mismatch", "station_mismatch"]


class Ed25519Check(Protocol):
    """True when `signature` is a valid Ed25519 signature of `message` under the raw 32-byte `public_key`."""

    def __call__(self, public_key: bytes, signature: bytes, message: bytes) -> bool: ...


class ReceiptVerified(msgspec.Struct, frozen=True, kw_only=True, tag="verified"):
    """A receipt whose signature, key and order digest all hold."""

    station: str
    """The station code the lab signed, e.g. "s05"."""
    host: str
    """The Host the checkout request named, e.g. "s05.lab.canitbuy.com"."""
    course: str
    """The course version, e.g. "2.1"."""
    iat: int
    """When the lab signed it, unix seconds."""
    jti: str
    """The receipt's random id: the same receipt counted twice is the same jti."""
    kid: str
    """The thumbprint of the lab key that signed it."""
    order: dict[str, Any]
    """The order marker the checkout page showed (see the lab README)."""
    order_sha256: str
    """sha256 hex of the canonical JSON of `order`."""
    agent_keyid: str | None
    """The Web Bot Auth keyid of the agent whose signed request opened the checkout; None when unsigned."""


class ReceiptRefused(msgspec.Struct, frozen=True, kw_only=True, tag="refused"):
    """A receipt that does not prove what it says, and why."""

    reason: RefusalReason
    detail: str


ReceiptCheck = ReceiptVerified | ReceiptRefused


class _Header(msgspec.Struct, frozen=True):
    alg: str
    kid: str
    typ: str


class _Payload(msgspec.Struct, frozen=True):
    iss: str
    station: str
    course: str
    host: str
    iat: int
    jti: str
    order: dict[str, Any]
    order_sha256: str
    agent_keyid: str | None


class _Parsed(msgspec.Struct, frozen=True):
    header: _Header
    payload: _Payload
    signing_input: bytes
    signature: bytes


def canonical_json(value: object) -> bytes:
    """Sorted keys, separators "," and ":", non-ASCII kept, UTF-8: the bytes `order_sha256` is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def order_digest(order: object) -> str:
    return hashlib.sha256(canonical_json(order)).hexdigest()


def jwk_thumbprint(x: str) -> str:
    """RFC 7638 SHA-256 thumbprint of an Ed25519 OKP key, base64url without padding."""
    members = canonical_json({"crv": "Ed25519", "kty": "OKP", "x": x})
    return base64.urlsafe_b64encode(hashlib.sha256(members).digest()).decode().rstrip("=")


def _b64url(text: str) -> bytes:
    if not text or "=" in text:
        raise ValueError("empty or padded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _refused(reason: RefusalReason, detail: str) -> ReceiptRefused:
    return ReceiptRefused(reason=reason, detail=detail)


def parse(compact: str) -> _Parsed | ReceiptRefused:
    """The header, payload and signature of a compact JWS, with their shapes checked."""
    if not isinstance(compact, str) or len(compact) > MAX_RECEIPT_CHARS or compact.count(".") != 2:
        return _refused("malformed", "not a compact JWS of three parts")
    head, body, sig = compact.split(".")
    try:
        header = msgspec.json.decode(_b64url(head), type=_Header)
        payload = msgspec.json.decode(_b64url(body), type=_Payload)
        signature = _b64url(sig)
    except (ValueError, binascii.Error, msgspec.DecodeError) as error:
        return _refused("malformed", f"a part does not decode: {error}")
    if header.alg != "EdDSA" or header.typ != TYP:
        return _refused("malformed", f"header must be alg EdDSA, typ {TYP}")
    if payload.iss != ISSUER:
        return _refused("malformed", f"issuer must be {ISSUER}")
    return _Parsed(header, payload, f"{head}.{body}".encode("ascii"), signature)


def _lab_key(jwks: Mapping[str, Any], kid: str) -> bytes | None:
    keys = jwks.get("keys")
    for jwk in keys if isinstance(keys, list) else []:
        if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            continue
        x = jwk.get("x")
        # The kid is recomputed from the key, never taken from the JWKS's own "kid" member.
        if isinstance(x, str) and jwk_thumbprint(x) == kid:
            try:
                raw = _b64url(x)
            except (ValueError, binascii.Error):
                continue
            if len(raw) == 32:
                return raw
    return None


def verify_receipt(
    compact: str, jwks: Mapping[str, Any], check: Ed25519Check, station: str | None = None
) -> ReceiptCheck:
    """Accept a receipt signed by a key of `jwks` (the lab's published keys); `station`, if given, must match."""
    parsed = parse(compact)
    if isinstance(parsed, ReceiptRefused):
        return parsed
    key = _lab_key(jwks, parsed.header.kid)
    if key is None:
        return _refused("unknown_key", f"no Ed25519 key with thumbprint {parsed.header.kid} in the lab's keys")
    if not check(key, parsed.signature, parsed.signing_input):
        return _refused("bad_signature", "the signature does not verify under the lab's key")
    payload = parsed.payload
    if order_digest(payload.order) != payload.order_sha256:
        return _refused("order_digest_mismatch", "order_sha256 is not the digest of the order")
    if payload.order.get("station") != payload.station:
        return _refused("station_mismatch", "the order names another station than the receipt")
    if station is not None and payload.station != station:
        return _refused("station_mismatch", f"the receipt is for {payload.station}, not {station}")
    return ReceiptVerified(
        station=payload.station,
        host=payload.host,
        course=payload.course,
        iat=payload.iat,
        jti=payload.jti,
        kid=parsed.header.kid,
        order=payload.order,
        order_sha256=payload.order_sha256,
        agent_keyid=payload.agent_keyid,
    )
