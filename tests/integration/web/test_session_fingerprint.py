"""A staff session's cookie carries an HMAC of the account's password hash under the site secret, never a piece of
the hash: whoever reads the cookie learns nothing of it, and a new password still ends the session. The real site
over SQLite, through Starlette's TestClient over https."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from desk_client import STAFF, sign_in
from leaderboard_site import leaderboard_site

from adapters.settings import Settings
from adapters.sqldb import SqlDb
from adapters.staff_accounts import StaffAccounts
from web.staff.session import COOKIE, SessionCodec


@pytest.fixture
def client(tmp_path: Path) -> Iterator:
    with leaderboard_site(Settings(data_dir=tmp_path / "var")) as site_client:
        yield site_client


def cookie_payload(client) -> dict:
    payload = client.cookies[COOKIE].partition(".")[0]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def password_hash(client) -> str:
    account = StaffAccounts(SqlDb(client.app.state.site.settings)).get(STAFF[0])
    assert account is not None
    return account.password_hash


def test_the_cookie_holds_nothing_of_the_password_hash(client) -> None:
    sign_in(client, *STAFF)
    fingerprint = cookie_payload(client)["fingerprint"]
    stored = password_hash(client)
    assert len(fingerprint) == 22  # 128 bits, base64url
    assert not any(stored[at:at + 6] in fingerprint for at in range(len(stored) - 5))
    assert client.get("/staff/", follow_redirects=False).status_code == 200


def test_a_new_password_hash_still_ends_the_session(client) -> None:
    sign_in(client, *STAFF)
    assert client.get("/staff/", follow_redirects=False).status_code == 200
    accounts = StaffAccounts(SqlDb(client.app.state.site.settings))
    with accounts.db.transaction() as tx:  # a new hash, its sessions' rows left: only the fingerprint tells
        tx.execute("UPDATE staff_accounts SET password_hash = ? WHERE email = ?",
                   (accounts.hasher.hash("another long password"), STAFF[0]))
    assert client.get("/staff/", follow_redirects=False).status_code == 303


def test_the_fingerprint_depends_on_the_site_secret_and_the_hash() -> None:
    one, other = SessionCodec(b"a" * 32), SessionCodec(b"b" * 32)
    assert one.fingerprint("$argon2id$v=19$x") == one.fingerprint("$argon2id$v=19$x")
    assert one.fingerprint("$argon2id$v=19$x") != other.fingerprint("$argon2id$v=19$x")
    assert one.fingerprint("$argon2id$v=19$x") != one.fingerprint("$argon2id$v=19$y")
