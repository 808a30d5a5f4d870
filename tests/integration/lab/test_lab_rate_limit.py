"""Issue 15 item 1: the lab holds every client to the course's pace (one request a second, a burst of 30), counted
per Web Bot Auth keyid or per address, static assets free, our own agent's key on a budget of its own; in memory
for one process, in Redis for several. Each test runs `canitbuy lab serve` as a process of its own."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from lab.botauth.directory import thumbprint
from lab.ratelimit import PUBLIC
from tests.integration.lab.lab_process import LabProcess, lab_process

UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36"


def _client(lab: LabProcess, station: str | None = "s01", **headers: str) -> httpx.Client:
    return httpx.Client(base_url=lab.loopback_url(), headers={"Host": lab.host_for(station), "User-Agent": UA,
                                                              **headers}, timeout=10, follow_redirects=False)


def _statuses(client: httpx.Client, count: int, path: str = "/", **kwargs: object) -> list[int]:
    return [client.get(path, **kwargs).status_code for _ in range(count)]  # type: ignore[arg-type]


def _allowed_then_refused(statuses: list[int]) -> int:
    """How many went through before the first 429; after it, every one is refused."""
    first = statuses.index(429)
    assert set(statuses[:first]) == {200} and set(statuses[first:]) == {429}, statuses
    return first


def test_past_its_burst_a_client_gets_429_with_retry_after_and_a_page_that_says_why(tmp_path: Path) -> None:
    with lab_process(tmp_path / "var") as lab, _client(lab) as client:
        allowed = _allowed_then_refused(_statuses(client, PUBLIC.burst + 10))
        assert PUBLIC.burst <= allowed <= PUBLIC.burst + 2  # a request or two more as the budget refills
        refused = client.get("/products/aero-run-2")
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 2
        assert "at most one request a second" in refused.text and "weekly Matrix" in refused.text
        # A forged X-Forwarded-For from a peer that is no trusted proxy changes nothing.
        assert client.get("/", headers={"X-Forwarded-For": "203.0.113.7"}).status_code == 429
        # Static assets are not counted, and are served while pages are refused.
        assert set(_statuses(client, 50, "/static/lab.css")) == {200}


def test_behind_a_trusted_proxy_each_client_has_its_own_budget(tmp_path: Path) -> None:
    with lab_process(tmp_path / "var", "--trusted-proxy", "127.0.0.1") as lab, _client(lab) as client:
        one = {"X-Forwarded-For": "203.0.113.7"}
        _allowed_then_refused(_statuses(client, PUBLIC.burst + 5, headers=one))
        assert client.get("/", headers={"X-Forwarded-For": "203.0.113.8"}).status_code == 200
        # A hop the client wrote to the left of the proxy's proves nothing: the proxy's own hop counts.
        assert client.get("/", headers={"X-Forwarded-For": "198.51.100.1, 203.0.113.7"}).status_code == 429


def test_a_signed_agent_is_counted_by_its_keyid_and_our_own_key_has_a_budget_apart(
    tmp_path: Path, agent_keys, sign
) -> None:
    ours = thumbprint(agent_keys.x)
    with lab_process(tmp_path / "ours", "--trust-local-directories", "--own-key-id", ours) as lab:
        signed = sign(agent_keys, lab.host_for("s01"))
        with _client(lab, **signed) as agent, _client(lab) as flood:
            assert _statuses(flood, PUBLIC.burst + 5)[-3:] == [429] * 3  # the address is spent ...
            # A signature that does not verify is counted by address, like no signature.
            forged = sign(agent_keys, lab.host_for("s01"), private=Ed25519PrivateKey.generate())
            assert agent.get("/", headers=forged).status_code == 429
            assert set(_statuses(agent, 3 * PUBLIC.burst)) == {200}  # ... our agent from it is not
    with lab_process(tmp_path / "theirs", "--trust-local-directories") as lab:
        signed = sign(agent_keys, lab.host_for("s01"))
        with _client(lab, **signed) as agent, _client(lab) as browser:
            _allowed_then_refused(_statuses(agent, PUBLIC.burst + 5))  # any other key: the public budget
            assert browser.get("/").status_code == 200  # counted apart from the address it came from


@pytest.mark.redis
def test_two_lab_processes_on_one_redis_share_each_clients_budget(tmp_path: Path) -> None:
    options = ("--trusted-proxy", "127.0.0.1", "--redis-url", "redis://127.0.0.1:6379/0")
    address = f"2001:db8:{secrets.randbelow(65535):x}::{secrets.randbelow(65535):x}"  # a client of this run only
    with (lab_process(tmp_path / "a", *options) as first, lab_process(tmp_path / "b", *options) as second,
          _client(first, "s02") as a, _client(second, "s02") as b):
        headers = {"X-Forwarded-For": address}
        statuses = [(a if n % 2 else b).get("/", headers=headers).status_code for n in range(PUBLIC.burst + 10)]
        # Each process alone would let 30 through: together they let 30 through, as one.
        allowed = _allowed_then_refused(statuses)
        assert PUBLIC.burst <= allowed <= PUBLIC.burst + 2
        refused = a.get("/help/delivery", headers=headers)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert b.get("/", headers={"X-Forwarded-For": "2001:db8::1:" + secrets.token_hex(2)}).status_code == 200


def test_our_workers_network_reads_on_our_budget_unsigned(tmp_path: Path) -> None:
    # The reading station's fetcher does not sign: the workers' network is named to the lab instead.
    with lab_process(tmp_path / "var", "--own-network", "127.0.0.1/32") as lab, _client(lab) as reader:
        assert set(_statuses(reader, 3 * PUBLIC.burst)) == {200}
