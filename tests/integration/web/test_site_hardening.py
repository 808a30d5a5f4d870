"""Issue 18, items 2-4 and 8-12: the site against a real server (uvicorn on a free port: in a thread where the test
looks inside the app, in a process of its own where it measures memory or the start), behind a trusted proxy."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import yaml
from desk_client import STAFF, csrf_of
from leaderboard_site import a_run, body

from adapters.settings import Settings
from adapters.sqldb import SqlDb
from adapters.staff_accounts import StaffAccounts
from adapters.wiring import build_runtime
from domain.eventlog.commands import RecordManualTest
from domain.eventlog.handlers import record_manual_test
from web.app import create_app
from web.staff.ratelimit import SignInLimiter

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parents[3]
SECRET = "a site secret long enough to sign sessions with"
JSON = {"content-type": "application/json"}
MB = 1024 * 1024


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the site exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("the site did not start")


def sign_in_post(client: httpx.Client | httpx.AsyncClient, email: str, password: str, client_ip: str | None = None,
                 area: str = "staff") -> Any:
    """A sign-in as a browser posts it: the double-submit token in the cookie and in the form."""
    token = secrets.token_urlsafe(16)
    cookie = "cib_sign_in" if area == "staff" else "cib_org_sign_in"
    headers = {"cookie": f"{cookie}={token}"}
    if client_ip:
        headers["x-forwarded-for"] = client_ip
    return client.post(f"/{area}/sign-in", data={"csrf": token, "email": email, "password": password},
                       headers=headers, follow_redirects=False)


# -- the site in a thread of this process, behind a trusted proxy (127.0.0.1) ------------------------------------


@dataclass
class ThreadSite:
    url: str
    app: Any

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60)

    @property
    def desk(self) -> Any:
        return self.app.state.site.desk


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadSite]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("hardening") / "var", site_secret=SECRET,
                        trusted_proxies=("127.0.0.1/32", "::1/128"))
    accounts = StaffAccounts(SqlDb(settings))
    accounts.db.migrate()
    accounts.add(*STAFF, role="staff")
    app = create_app(settings)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url)
        yield ThreadSite(url, app)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# -- the site as a process of its own (`canitbuy web serve`), for its memory and its start -----------------------


@dataclass
class ProcessSite:
    url: str
    process: subprocess.Popen[bytes]
    data_dir: Path

    def status(self, field: str) -> int:
        """A memory figure of the server process from /proc, in bytes (VmHWM: the peak resident set)."""
        text = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
        assert match, text
        return int(match.group(1)) * 1024


def _serve_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    return {**env, "PYTHONPATH": str(ROOT), "CANITBUY_DATA_DIR": str(data_dir), **extra}


def _serve_command(port: int) -> list[str]:
    return [sys.executable, "-m", "ops.cli", "web", "serve", "--host", "127.0.0.1", "--port", str(port)]


@pytest.fixture
def process_site(tmp_path: Path) -> Iterator[Any]:
    """A factory: start `canitbuy web serve` over a data dir (made by `prepare`, or by the site itself)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(data_dir: Path, **extra: str) -> ProcessSite:
        port = _free_port()
        log = (tmp_path / f"site-{port}.log").open("wb")  # a file, not a pipe: a full pipe would stop the server
        process = subprocess.Popen(_serve_command(port), env=_serve_env(data_dir, **extra), stdout=log,
                                   stderr=subprocess.STDOUT, cwd=ROOT)
        started.append(process)
        url = f"http://127.0.0.1:{port}"
        _wait_until_up(url, process)
        return ProcessSite(url, process, data_dir)

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def _accounts(data_dir: Path) -> StaffAccounts:
    accounts = StaffAccounts(SqlDb(Settings(data_dir=data_dir)))
    accounts.db.migrate()
    return accounts


# -- item 2: sign-in throttling holds under concurrency -----------------------------------------------------------


async def _at_once(url: str, attempts: list[tuple[str, str, str]]) -> list[int]:
    limits = httpx.Limits(max_connections=len(attempts))
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as client:
        answers = await asyncio.gather(*(sign_in_post(client, e, p, ip) for e, p, ip in attempts))
    return [answer.status_code for answer in answers]


def test_a_burst_of_wrong_passwords_meets_the_limit_and_a_burst_of_sign_ins_costs_little_memory(
    process_site: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "var"
    _accounts(data_dir).add(*STAFF, role="staff")
    served = process_site(data_dir, CANITBUY_SITE_SECRET=SECRET, CANITBUY_TRUSTED_PROXIES="127.0.0.1")
    before = served.status("VmHWM")
    statuses = asyncio.run(_at_once(served.url, [(STAFF[0], "a wrong password!", "203.0.113.9")] * 30))
    assert statuses.count(401) == 5 and statuses.count(429) == 25, statuses  # the limit is 5 an account
    # Many clients at once, each for another account: every attempt hashes (argon2id, 64 MiB each), two at a time.
    burst = [(f"user{n}@example.test", "a wrong password!", f"198.51.100.{n}") for n in range(1, 17)]
    assert asyncio.run(_at_once(served.url, burst)) == [401] * 16
    grown = served.status("VmHWM") - before
    assert grown < 350 * MB, f"the site grew by {grown // MB} MB for 46 sign-in attempts"


# -- item 3: behind the proxy, clients are told apart --------------------------------------------------------------


def test_behind_the_trusted_proxy_one_client_locked_out_does_not_lock_out_another(site: ThreadSite) -> None:
    site.desk.limiter = SignInLimiter(per_address=3)  # 20 in production; fewer here, as every attempt hashes
    with site.client() as client:
        attacker = [sign_in_post(client, f"guess{n}@example.test", "a wrong password!", "203.0.113.66").status_code
                    for n in range(4)]
        assert attacker == [401] * 3 + [429]
        # The proxy appends the address it saw: what a client wrote further left proves nothing.
        spoofed = sign_in_post(client, "guess@example.test", "a wrong password!", "192.0.2.1, 203.0.113.66")
        assert spoofed.status_code == 429
        assert sign_in_post(client, *STAFF, client_ip="198.51.100.23").status_code == 303


def test_forwarded_headers_from_an_untrusted_peer_are_ignored(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "var", site_secret=SECRET, trusted_proxies=("192.0.2.200/32",))
    with TestClient(create_app(settings), base_url="http://testserver", client=("192.0.2.1", 5000)) as client:
        client.app.state.site.desk.limiter = SignInLimiter(per_address=3)  # fewer: each attempt hashes
        answers = [sign_in_post(client, f"x{n}@example.test", "a wrong password!", f"198.51.100.{n}").status_code
                   for n in range(1, 5)]
        assert answers == [401] * 3 + [429]  # every "client" is the peer that wrote the header
        hsts = client.get("/healthz", headers={"x-forwarded-proto": "https"}).headers
        assert "strict-transport-security" not in hsts


def test_the_deployment_files_and_the_docs_carry_the_proxy_settings() -> None:
    deploy = ROOT / "ops" / "deploy"
    env = dict(line.split("=", 1) for line in (deploy / "canitbuy.env").read_text().splitlines()
               if line and not line.startswith("#"))
    settings = Settings.from_env({k: v for k, v in env.items() if v and "SECRET" not in k})
    assert settings.trusted_proxies == ("127.0.0.1/32", "::1/128")  # the systemd units: a proxy on loopback
    compose = yaml.safe_load((deploy / "compose.yaml").read_text())
    proxy_address = compose["services"]["proxy"]["networks"]["default"]["ipv4_address"]
    assert compose["services"]["web"]["environment"]["CANITBUY_TRUSTED_PROXIES"] == proxy_address
    assert "ports" not in compose["services"]["web"]  # the site is reached through the proxy only
    assert "--proxy-headers" not in (deploy / "systemd" / "canitbuy-web.service").read_text()
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert "CANITBUY_TRUSTED_PROXIES" in operations and "X-Forwarded-For" in operations


# -- item 4: videos streamed from disk, with Range requests --------------------------------------------------------


def _read_slowly(url: str, path: str, seconds: float) -> int:
    host, port = url.removeprefix("http://").split(":")
    got = 0
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            chunk = sock.recv(16 * 1024)
            if not chunk:
                break
            got += len(chunk)
            time.sleep(0.05)
    return got


def test_a_video_is_streamed_from_disk_with_range_requests(process_site: Any, tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    video = b"\x1a\x45\xdf\xa3" + os.urandom(40 * MB)
    with build_runtime(Settings(data_dir=data_dir)) as runtime:
        digest = runtime.blobs.put(video)
        [test_id] = record_manual_test(runtime.record, RecordManualTest(
            agent_name="Comet", tested_on=date(2026, 11, 24), outcomes={"s01": "stopped"}, video=digest,
            by=STAFF[0]))
    served = process_site(data_dir, CANITBUY_SITE_SECRET=SECRET)
    path = f"/manual-tests/{test_id}/video"
    deadline = time.monotonic() + 20
    while httpx.head(served.url + path).status_code == 404:  # the site reads manual tests from the log
        assert time.monotonic() < deadline
        time.sleep(0.2)
    part = httpx.get(served.url + path, headers={"range": "bytes=1000-1999"})
    assert part.status_code == 206 and part.content == video[1000:2000]
    assert part.headers["content-range"] == f"bytes 1000-1999/{len(video)}"
    assert part.headers["content-type"] == "video/webm"
    before = served.status("VmHWM")
    readers: list[int] = []
    threads = [threading.Thread(target=lambda: readers.append(_read_slowly(served.url, path, 4))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(readers) == 8 and all(readers), readers
    grown = served.status("VmHWM") - before
    assert grown < 100 * MB, f"8 slow readers of a 40 MB video grew the site by {grown // MB} MB"


# -- item 8: JSON nested 100,000 deep is a 400 ---------------------------------------------------------------------


def test_json_nested_too_deep_is_a_400_not_a_500(site: ThreadSite) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with site.client() as client:
        submitted = client.post("/api/leaderboard/submit", content=deep, headers=JSON)
        # ARC's validator answers a body it cannot read as a JSON object with its first message, and so do we
        assert submitted.status_code == 400
        assert submitted.json()["error"]["detail"] == "Send a JSON object. See /leaderboard/spec."
        asked = client.post("/api/ask", headers=JSON, content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
                            b'"params": {"name": "submit_leaderboard_run", "arguments": ' + deep + b"}}")
        assert asked.status_code == 400 and asked.json()["error"]["code"] == -32700


# -- item 9: signing out ends the session on the server; a session is good in its own area only -------------------


def _signed_in(client: httpx.Client, area: str) -> str:
    answer = sign_in_post(client, *STAFF, client_ip="198.51.100.90", area=area)
    assert answer.status_code == 303, answer.text
    return str(answer.cookies["cib_staff" if area == "staff" else "cib_org"])


def test_signing_out_ends_the_session_and_a_copied_cookie_stops_working(site: ThreadSite) -> None:
    with site.client() as client:
        cookie = _signed_in(client, "staff")
        desk = client.get("/staff/", headers={"cookie": f"cib_staff={cookie}"}, follow_redirects=False)
        assert desk.status_code == 200
        out = client.post("/staff/sign-out", data={"csrf": csrf_of(desk.text)},
                          headers={"cookie": f"cib_staff={cookie}"}, follow_redirects=False)
        assert out.status_code == 303
        replay = client.get("/staff/", headers={"cookie": f"cib_staff={cookie}"}, follow_redirects=False)
        assert replay.status_code == 303 and replay.headers["location"].startswith("/staff/sign-in")

        member_cookie = _signed_in(client, "org")
        assert client.get("/org", headers={"cookie": f"cib_org={member_cookie}"}).status_code == 200
        page = client.get("/org", headers={"cookie": f"cib_org={member_cookie}"}).text
        client.post("/org/sign-out", data={"csrf": csrf_of(page)}, headers={"cookie": f"cib_org={member_cookie}"})
        replay = client.get("/org", headers={"cookie": f"cib_org={member_cookie}"}, follow_redirects=False)
        assert replay.status_code == 303


def test_a_desk_session_does_not_open_the_members_area_nor_the_other_way_round(site: ThreadSite) -> None:
    with site.client() as client:
        desk_cookie, org_cookie = _signed_in(client, "staff"), _signed_in(client, "org")
        as_member = client.get("/org", headers={"cookie": f"cib_org={desk_cookie}"}, follow_redirects=False)
        assert as_member.status_code == 303 and as_member.headers["location"] == "/org/sign-in"
        as_desk = client.get("/staff/", headers={"cookie": f"cib_staff={org_cookie}"}, follow_redirects=False)
        assert as_desk.status_code == 303 and as_desk.headers["location"].startswith("/staff/sign-in")


# -- item 10: the limiter stores nothing for what it refuses, and stays bounded -------------------------------------


def test_the_sign_in_limiter_stores_nothing_for_refused_attempts_and_stays_bounded(site: ThreadSite) -> None:
    site.desk.limiter = SignInLimiter()
    with site.client() as client:
        # One account guessed from one address: 5 attempts count, the other 35 are refused and leave nothing.
        answers = [sign_in_post(client, "target@example.test", "a wrong password!", "203.0.113.1").status_code
                   for _ in range(40)]
        assert answers == [401] * 5 + [429] * 35
        assert len(site.desk.limiter) == 2  # the account from that address, and the address
        site.desk.limiter = SignInLimiter(max_keys=10)
        for n in range(8):  # 8 clients, 8 accounts: 16 names for a limiter that holds 10
            sign_in_post(client, f"many{n}@example.test", "a wrong password!", f"198.51.100.{n + 100}")
        assert len(site.desk.limiter) <= 10


# -- item 11: short secrets refused at start; the data dir and the SQLite files are the owner's alone -------------


def _start_fails(data_dir: Path, **extra: str) -> str:
    done = subprocess.run(_serve_command(_free_port()), env=_serve_env(data_dir, **extra), capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_a_short_site_secret_is_refused_at_start(tmp_path: Path) -> None:
    assert "at least 32 bytes" in _start_fails(tmp_path / "a", CANITBUY_SITE_SECRET="x")
    data_dir = tmp_path / "b"
    data_dir.mkdir()
    (data_dir / "site-secret").write_bytes(b"")
    assert "site-secret" in _start_fails(data_dir)


def test_the_data_dir_and_the_sqlite_files_are_made_for_their_owner_only(process_site: Any, tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh" / "var"
    served = process_site(data_dir)
    with httpx.Client(base_url=served.url) as client:
        assert sign_in_post(client, "nobody@example.test", "a wrong password!").status_code == 401
    assert data_dir.stat().st_mode & 0o777 == 0o700
    files = sorted(data_dir.glob("*.sqlite3*")) + [data_dir / "site-secret"]
    assert {f.name for f in files} >= {"canitbuy.sqlite3", "readmodels.sqlite3", "site-secret"}
    assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {f.name: "0o600" for f in files}


# -- item 12: HSTS over https; submissions only as application/json -------------------------------------------------


def test_hsts_is_sent_over_https_only(site: ThreadSite) -> None:
    with site.client() as client:
        over_https = client.get("/healthz", headers={"x-forwarded-proto": "https"})
        assert over_https.headers["strict-transport-security"].startswith("max-age=31536000")
        assert "strict-transport-security" not in client.get("/healthz").headers


def test_a_submission_is_taken_only_as_application_json(site: ThreadSite) -> None:
    run = body(a_run("content type"))
    with site.client() as client:
        for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {"x-forwarded-for": "192.0.2.77", **({"content-type": content_type} if content_type else {})}
            refused = client.post("/api/leaderboard/submit", content=run, headers=headers)
            assert refused.status_code == 400 and "application/json" in refused.json()["error"]["detail"]
            ask = client.post("/api/ask", headers=headers, content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
            assert ask.status_code == 415
        taken = client.post("/api/leaderboard/submit", content=run, headers={"x-forwarded-for": "192.0.2.77", **JSON})
        assert taken.status_code == 201  # a first submission: the refused ones stored nothing
