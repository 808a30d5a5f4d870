"""Five wrong passwords lock an account out for the client that typed them, not for everyone: a stranger who fails
on a staff or a member's account locks out only their own address, and the account's people still sign in from
theirs; the limit per address stays (20 attempts, on any accounts). The real site, its limits kept in its
database, on SQLite and on PostgreSQL, through Starlette's TestClient from several client addresses."""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Iterator

import pytest
from leaderboard_site import site_on_backend

from adapters.sqldb import SqlDb
from adapters.staff_accounts import StaffAccounts
from web.staff.ratelimit import PER_ACCOUNT, PER_ADDRESS

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

MEMBER = ("member@acme.example", "a long member password")
WRONG = "a wrong password!"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    for site_client in site_on_backend(request, tmp_path_factory):
        StaffAccounts(SqlDb(site_client.app.state.site.settings)).add(*MEMBER, role="member", org="acme")
        yield site_client


def sign_in_from(client: TestClient, address: str, email: str, password: str, area: str = "staff") -> int:
    """A sign-in posted as a browser at `address` posts it (the form's token in its cookie and in the form)."""
    browser = TestClient(client.app, base_url="https://testserver", client=(address, 40000))
    token = secrets.token_urlsafe(16)
    cookie = "cib_sign_in" if area == "staff" else "cib_org_sign_in"
    response = browser.post(f"/{area}/sign-in", data={"csrf": token, "email": email, "password": password},
                            headers={"cookie": f"{cookie}={token}"}, follow_redirects=False)
    return response.status_code


@pytest.mark.parametrize(("area", "account", "stranger", "own"), [
    ("staff", ("editor@canitbuy.com", "a long staff password"), "203.0.113.10", "198.51.100.10"),
    ("org", MEMBER, "203.0.113.11", "198.51.100.11"),
])
def test_a_stranger_failing_on_an_account_locks_out_only_their_own_address(
        client: TestClient, area: str, account: tuple[str, str], stranger: str, own: str) -> None:
    email, password = account
    answers = [sign_in_from(client, stranger, email, WRONG, area) for _ in range(PER_ACCOUNT + 1)]
    assert answers == [401] * PER_ACCOUNT + [429]
    assert sign_in_from(client, stranger, email, password, area) == 429  # the stranger waits, even if right
    assert sign_in_from(client, own, email, password, area) == 303  # the account's own person signs in


def test_one_address_is_still_limited_over_every_account(client: TestClient) -> None:
    address = "203.0.113.12"
    answers = [sign_in_from(client, address, f"guess{n}@example.test", WRONG) for n in range(PER_ADDRESS + 1)]
    assert answers == [401] * PER_ADDRESS + [429]
    assert sign_in_from(client, address, "editor@canitbuy.com", "a long staff password") == 429
