"""Staff sessions: a signed cookie (HMAC-SHA256 with the site secret) holding the account, its role, an expiry
and the CSRF token bound to the session.

The cookie is Secure, HttpOnly and SameSite=Strict. A form posts the session's CSRF token back (synchronizer
token); a POST without it, or with another session's token, is refused with 403.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path

import msgspec

COOKIE = "cib_staff"
LIFETIME = 8 * 3600
SECRET_FILE = "site-secret"  # noqa: S105 - a file name, not a secret


class Session(msgspec.Struct, frozen=True):
    email: str
    role: str
    csrf: str
    expires: int
    fingerprint: str
    """The end of the account's password hash: a new password ends older sessions."""


def load_or_create_secret(configured: str | None, data_dir: Path) -> bytes:
    """The secret from settings, else the one kept in the data dir (made once, readable by us alone)."""
    if configured:
        return configured.encode()
    path = data_dir / SECRET_FILE
    if path.exists():
        return path.read_bytes().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48).encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as handle:
        handle.write(secret)
    return secret


class SessionCodec:
    def __init__(self, secret: bytes, clock: object = time.time) -> None:
        # A key of its own for sessions, so the site secret can serve other purposes without mixing.
        self._key = hmac.new(secret, b"canitbuy staff session v1", hashlib.sha256).digest()
        self._clock = clock

    def _now(self) -> int:
        return int(self._clock())  # type: ignore[operator]

    def issue(self, email: str, role: str, fingerprint: str) -> tuple[str, Session]:
        session = Session(email, role, secrets.token_urlsafe(32), self._now() + LIFETIME, fingerprint)
        payload = base64.urlsafe_b64encode(msgspec.json.encode(session)).rstrip(b"=")
        signature = base64.urlsafe_b64encode(hmac.new(self._key, payload, hashlib.sha256).digest()).rstrip(b"=")
        return (payload + b"." + signature).decode(), session

    def read(self, cookie: str | None) -> Session | None:
        if not cookie or "." not in cookie:
            return None
        payload, _, signature = cookie.encode().partition(b".")
        expected = base64.urlsafe_b64encode(hmac.new(self._key, payload, hashlib.sha256).digest()).rstrip(b"=")
        if not hmac.compare_digest(signature, expected):
            return None
        try:
            session = msgspec.json.decode(base64.urlsafe_b64decode(payload + b"=" * (-len(payload) % 4)), type=Session)
        except (msgspec.DecodeError, ValueError):
            return None
        return session if session.expires > self._now() else None


def csrf_ok(session: Session, submitted: object) -> bool:
    return isinstance(submitted, str) and hmac.compare_digest(session.csrf.encode(), submitted.encode())


def cookie_header(value: str) -> dict[str, object]:
    return {"key": COOKIE, "value": value, "max_age": LIFETIME, "path": "/staff", "secure": True,
            "httponly": True, "samesite": "strict"}
