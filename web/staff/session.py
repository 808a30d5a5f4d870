"""Sessions of the staff desk and the members' area: a signed cookie (HMAC-SHA256 with the site secret) holding
the account, its role, the audience (the desk or the members' area), an expiry, the CSRF token bound to the
session and the session's id, which must also be in the web_sessions table.

The table makes signing out real: it deletes the account's rows, so every session of the account (another browser,
a copied cookie) stops working at once, in every site process (they share the database). A new password or role
deletes them too (StaffAccounts.add), and the fingerprint and role are checked against the account on each request. The
fingerprint is an HMAC of the account's password hash under a key of the site secret: a new password ends the
sessions opened under the old one, and the cookie (readable by whoever holds it) tells nothing of the hash. The
audience keeps a desk cookie from opening the members' area and the other way round.

The cookie is Secure, HttpOnly and SameSite=Strict. A form posts the session's CSRF token back (synchronizer
token); a POST without it, or with another session's token, is refused with 403.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from pathlib import Path

import msgspec

from adapters.private_files import write_once
from adapters.settings import MIN_SECRET_BYTES
from adapters.sqldb import SqlDb

COOKIE = "cib_staff"
LIFETIME = 8 * 3600
FINGERPRINT_BYTES = 16
SECRET_FILE = "site-secret"  # noqa: S105 - a file name, not a secret
STAFF, MEMBERS = "staff", "org"
"""The two audiences: the staff desk (/staff) and the members' area (/org)."""


class SecretError(ValueError):
    """The site secret is too short to sign sessions with; the message says which one."""


class Session(msgspec.Struct, frozen=True):
    email: str
    role: str
    csrf: str
    expires: int
    fingerprint: str
    """`SessionCodec.fingerprint` of the account's password hash: a new password ends older sessions."""
    audience: str
    """Where the session was opened (staff or org); it is good there only."""
    sid: str
    """The session's id in web_sessions: signing out deletes it."""


def load_or_create_secret(configured: str | None, data_dir: Path) -> bytes:
    """The secret from settings, else the one kept in the data dir (made once, readable by us alone).
    Either must be at least MIN_SECRET_BYTES long: a short one is refused, never padded."""
    if configured:
        return _long_enough(configured.encode(), "CANITBUY_SITE_SECRET")
    path = data_dir / SECRET_FILE
    if path.exists():
        return _long_enough(path.read_bytes().strip(), str(path))
    # Another process may make it at the same moment: then theirs is the one kept, and used.
    return _long_enough(write_once(path, secrets.token_urlsafe(48).encode()).strip(), str(path))


def _long_enough(secret: bytes, where: str) -> bytes:
    if len(secret) < MIN_SECRET_BYTES:
        raise SecretError(f"the site secret in {where} is {len(secret)} bytes; it must be at least "
                          f"{MIN_SECRET_BYTES} (delete an empty site-secret file to have one made)")
    return secret


class SessionCodec:
    def __init__(self, secret: bytes, clock: object = time.time) -> None:
        # A key of its own for sessions, so the site secret can serve other purposes without mixing.
        self._key = hmac.new(secret, b"canitbuy staff session v2", hashlib.sha256).digest()
        self._fingerprint_key = hmac.new(secret, b"canitbuy password fingerprint v1", hashlib.sha256).digest()
        self._clock = clock

    def fingerprint(self, password_hash: str) -> str:
        """What a session carries of its account's password hash: 128 bits of its HMAC-SHA256 under a key of the
        site secret, so it changes with the password and tells nothing of the hash."""
        digest = hmac.new(self._fingerprint_key, password_hash.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:FINGERPRINT_BYTES]).rstrip(b"=").decode()

    def _now(self) -> int:
        return int(self._clock())  # type: ignore[operator]

    def issue(self, email: str, role: str, fingerprint: str, audience: str) -> tuple[str, Session]:
        session = Session(email, role, secrets.token_urlsafe(32), self._now() + LIFETIME, fingerprint, audience,
                          secrets.token_urlsafe(24))
        payload = base64.urlsafe_b64encode(msgspec.json.encode(session)).rstrip(b"=")
        signature = base64.urlsafe_b64encode(hmac.new(self._key, payload, hashlib.sha256).digest()).rstrip(b"=")
        return (payload + b"." + signature).decode(), session

    def read(self, cookie: str | None, audience: str) -> Session | None:
        """The session the cookie holds when it is signed by us, unexpired and for this audience."""
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
        return session if session.expires > self._now() and session.audience == audience else None


class SessionStore:
    """The sessions still open (web_sessions): the cookie is good only while its row is here."""

    def __init__(self, db: SqlDb, clock: object = time.time) -> None:
        self.db, self._clock = db, clock

    def _now(self) -> int:
        return int(self._clock())  # type: ignore[operator]

    def open(self, session: Session) -> None:
        with self.db.transaction() as tx:
            tx.execute("DELETE FROM web_sessions WHERE expires_at <= ?", (self._now(),))
            tx.execute("INSERT INTO web_sessions (sid, email, audience, expires_at) VALUES (?, ?, ?, ?)",
                       (session.sid, session.email, session.audience, session.expires))

    def is_open(self, session: Session) -> bool:
        with self.db.transaction() as tx:
            row = tx.fetchone("SELECT 1 FROM web_sessions WHERE sid = ? AND email = ? AND audience = ? "
                              "AND expires_at > ?", (session.sid, session.email, session.audience, self._now()))
        return row is not None

    def end(self, session: Session) -> None:
        with self.db.transaction() as tx:
            tx.execute("DELETE FROM web_sessions WHERE sid = ?", (session.sid,))

    def end_all(self, email: str) -> None:
        """Every session of the account, wherever it was opened (signing out, a removed membership)."""
        with self.db.transaction() as tx:
            tx.execute("DELETE FROM web_sessions WHERE email = ?", (email,))


def csrf_ok(session: Session, submitted: object) -> bool:
    return isinstance(submitted, str) and hmac.compare_digest(session.csrf.encode(), submitted.encode())


def cookie_header(value: str) -> dict[str, object]:
    return {"key": COOKIE, "value": value, "max_age": LIFETIME, "path": "/staff", "secure": True,
            "httponly": True, "samesite": "strict"}
