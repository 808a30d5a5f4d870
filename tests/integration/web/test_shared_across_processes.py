"""Issue 15 item 2: two web processes (`canitbuy web serve`) on one PostgreSQL database count the same sign-in
attempts, and signing out, a new password or a new role ends every session of the account in both at once."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from adapters.settings import Settings
from adapters.sqldb import SqlDb
from adapters.staff_accounts import StaffAccounts
from web.staff.ratelimit import PER_ACCOUNT

ROOT = Path(__file__).resolve().parents[3]
SECRET = "a site secret long enough to sign sessions with"
EMAIL, PASSWORD = "editor@canitbuy.com", "a long staff password"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def two_sites(tmp_path: Path, postgres_url: str) -> Iterator[tuple[StaffAccounts, list[httpx.Client]]]:
    data_dir = tmp_path / "var"
    accounts = StaffAccounts(SqlDb(Settings(data_dir=data_dir, database_url=postgres_url)))
    accounts.db.migrate()
    accounts.add(EMAIL, PASSWORD, "staff")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    env.update(PYTHONPATH=str(ROOT), CANITBUY_DATA_DIR=str(data_dir), CANITBUY_DATABASE_URL=postgres_url,
               CANITBUY_SITE_SECRET=SECRET, CANITBUY_TRUSTED_PROXIES="127.0.0.1")
    processes, clients = [], []
    try:
        for _ in range(2):
            port = _free_port()
            log = (tmp_path / f"site-{port}.log").open("wb")
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "ops.cli", "web", "serve", "--host", "127.0.0.1", "--port", str(port)],
                env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))
            clients.append(httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120, follow_redirects=False))
        for process, client in zip(processes, clients, strict=True):
            deadline = time.monotonic() + 90
            while True:
                assert process.poll() is None, "the site exited"
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    assert time.monotonic() < deadline, "the site did not start"
                    time.sleep(0.2)
        yield accounts, clients
    finally:
        for client in clients:
            client.close()
        for process in processes:
            process.terminate()
            process.wait(timeout=20)


def _sign_in(site: httpx.Client, password: str = PASSWORD, address: str = "198.51.100.5") -> httpx.Response:
    token = secrets.token_urlsafe(16)
    return site.post("/staff/sign-in", data={"csrf": token, "email": EMAIL, "password": password},
                     headers={"cookie": f"cib_sign_in={token}", "x-forwarded-for": address})


def _session(site: httpx.Client, password: str = PASSWORD) -> str:
    answer = _sign_in(site, password)
    assert answer.status_code == 303, answer.text
    return str(answer.cookies["cib_staff"])


def _desk(site: httpx.Client, cookie: str) -> int:
    return site.get("/staff/", headers={"cookie": f"cib_staff={cookie}"}).status_code


def test_wrong_passwords_spread_over_two_processes_meet_one_limit(two_sites) -> None:
    _, (a, b) = two_sites
    statuses = [_sign_in(site, "a wrong password!", "203.0.113.9").status_code for site in [a, b] * 6]
    # Each process counting alone would have let 2 x 5 through.
    assert statuses == [401] * PER_ACCOUNT + [429] * (12 - PER_ACCOUNT), statuses
    assert "Too many attempts" in _sign_in(b, PASSWORD, "203.0.113.9").text  # the right one waits too


def test_signing_out_a_new_password_or_a_new_role_ends_every_session_in_both_processes(two_sites) -> None:
    accounts, (a, b) = two_sites
    first, second = _session(a), _session(b)  # two browsers, one on each process
    assert [_desk(site, cookie) for site in (a, b) for cookie in (first, second)] == [200] * 4
    page = b.get("/staff/", headers={"cookie": f"cib_staff={second}"}).text
    token = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    out = b.post("/staff/sign-out", data={"csrf": token}, headers={"cookie": f"cib_staff={second}"})
    assert out.status_code == 303
    assert [_desk(site, cookie) for site in (a, b) for cookie in (first, second)] == [303] * 4

    third = _session(a)
    accounts.add(EMAIL, "a new staff password", "staff", replace=True)  # what `canitbuy staff add --replace` does
    assert (_desk(a, third), _desk(b, third)) == (303, 303)

    fourth = _session(b, "a new staff password")
    assert _desk(a, fourth) == 200
    accounts.add(EMAIL, "a new staff password", "auditor", replace=True)  # the staff role taken away
    assert (_desk(a, fourth), _desk(b, fourth)) == (303, 303)
    with accounts.db.transaction() as tx:
        assert tx.fetchone("SELECT COUNT(*) FROM web_sessions WHERE email = ?", (EMAIL,)) == (0,)
