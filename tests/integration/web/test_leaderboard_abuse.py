"""Abuse of the submission service: caps shared by every web process, a flood refused before its body is read,
and nothing a submitter sent (control characters, markup, credentials) on any page, in any JSON or log line."""

from __future__ import annotations

import logging
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import anyio
import pytest
import redis
from leaderboard_site import a_run, body, from_network

from adapters.settings import Settings
from tests.conftest import OwnRedis
from web.app import create_app
from web.submission_caps import PER_MINUTE, RETRY_REDIS_SECONDS, FloodGuard, RedisCounter, SqlCounter

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SUBMIT = "/api/leaderboard/submit"
JSON = {"content-type": "application/json"}


@contextmanager
def web_processes(settings: Settings, count: int) -> Iterator[list[TestClient]]:
    """`count` sites on one database, as several web processes are: nothing shared but the database."""
    settings = Settings(data_dir=settings.data_dir, database_url=settings.database_url, site_secret="test secret " * 4)
    with ExitStack() as stack:
        yield [
            stack.enter_context(TestClient(create_app(settings), base_url="https://testserver")) for _ in range(count)
        ]


def wait_for_a_fresh_minute() -> None:
    """The flood window is the clock's minute: start a burst early in one, so it does not straddle two."""
    while time.time() % 60 > 45:
        time.sleep(1)


def test_the_daily_cap_holds_across_web_processes(settings: Settings) -> None:
    with web_processes(settings, 2) as (a, b):
        answers = [
            from_network(site, f"203.0.113.{n}").post(SUBMIT, content=body(a_run(f"shared cap {n}")), headers=JSON)
            for n, site in enumerate([a, b, a, b, a, b])
        ]
        assert [r.status_code for r in answers] == [201] * 5 + [429]
        assert answers[-1].json()["error"]["detail"].startswith("at most 5 submissions a network a day")
        retry = int(answers[-1].headers["retry-after"])
        assert 0 < retry <= 86_401  # until the next UTC midnight


def test_a_flood_from_one_network_gets_429_with_retry_after_and_costs_nothing_else(settings: Settings) -> None:
    with web_processes(settings, 2) as (a, b):
        wait_for_a_fresh_minute()
        record = a.app.state.site.runtime.record
        head = record.head_position()
        flood = [
            from_network(a if n % 3 else b, "198.51.100.9").post(SUBMIT, content=b'{"spec": 1}', headers=JSON)
            for n in range(PER_MINUTE)
        ]
        assert {r.status_code for r in flood} == {400}
        refused = from_network(b, "198.51.100.77").post(SUBMIT, content=body(a_run("in the flood")), headers=JSON)
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert "too many requests from this network" in refused.json()["error"]["detail"]
        mcp = from_network(a, "198.51.100.78").post("/api/ask", content=b"{}", headers=JSON)
        assert mcp.status_code == 429  # the MCP server is the same door
        assert record.head_position() == head  # nothing was stored, no quota was counted
        other = from_network(a, "192.0.2.200").post(SUBMIT, content=body(a_run("another network")), headers=JSON)
        assert other.status_code == 201  # another network is untouched


@pytest.mark.redis
def test_the_flood_counter_in_redis_is_shared_by_processes(sqlite_settings: Settings) -> None:
    network, now = f"test-{uuid.uuid4().hex}", 1_800_000_000.0
    with web_processes(sqlite_settings, 1) as (site,):
        database = site.app.state.site.submission_flood.counter  # the site has no Redis: its counter is the database
        assert isinstance(database, SqlCounter)
        first = FloodGuard(RedisCounter("redis://127.0.0.1:6379/0", database), per_minute=3, clock=lambda: now)
        second = FloodGuard(RedisCounter("redis://127.0.0.1:6379/0", database), per_minute=3, clock=lambda: now)

        async def burst() -> list[int]:
            return [await guard.retry_after(network) for guard in (first, second, first, second)]

        assert anyio.run(burst) == [0, 0, 0, 60]
        assert anyio.run(database.hit, network, int(now // 60)) == 1, "nothing was counted in the database"


@pytest.mark.redis
def test_while_the_sites_redis_is_out_submissions_are_counted_in_the_database(
    sqlite_settings: Settings, own_redis: OwnRedis
) -> None:
    """The flood guard asked Redis for every submission and every MCP question: with Redis paused or gone, each
    one was a 500. Counted in the database while it is out, in Redis again once it answers."""
    settings = Settings(data_dir=sqlite_settings.data_dir, redis_url=own_redis.url, site_secret="test secret " * 4,
                        trusted_proxies=("127.0.0.1/32",))
    keys = redis.Redis.from_url(own_redis.url)
    # One client, so one event loop, as one web process has; each sender is named as the site's proxy names it.
    with TestClient(create_app(settings), base_url="https://testserver", client=("127.0.0.1", 40000)) as site:

        def submit(network: str, content: bytes) -> int:
            return site.post(SUBMIT, content=content, headers={**JSON, "X-Forwarded-For": network}).status_code

        wait_for_a_fresh_minute()
        assert submit("203.0.113.40", body(a_run("redis answers"))) == 201
        assert keys.keys("canitbuy:submission-flood:*"), "counted in Redis while it answers"
        own_redis.pause()
        assert submit("203.0.113.41", body(a_run("redis out"))) == 201
        flood = [submit("198.51.100.50", b'{"spec": 1}') for _ in range(PER_MINUTE + 1)]
        assert flood == [400] * PER_MINUTE + [429], "the flood is still refused, counted in the database"
        own_redis.resume()
        keys.flushdb()
        time.sleep(RETRY_REDIS_SECONDS + 0.5)
        assert submit("203.0.113.42", body(a_run("redis back"))) == 201
        assert keys.keys("canitbuy:submission-flood:*"), "counted in Redis again once it answers"


def test_nothing_a_submitter_sent_as_markup_control_or_credential_is_published_or_logged(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    data = a_run("leak check")
    data["agent"]["name"] = "Leaky\u0007<img src=x onerror=alert(1)>"
    data["agent"]["model"] = "m\u001b[31m<b>odel</b>"
    data["run"]["notes"] = "<script>alert('notes')</script>\u0000\r\n"
    refused = a_run("credentials")
    refused["agent"]["url"] = "https://agent:hunter2-secret@agent.test/"
    refused_evidence = a_run("credentials 2")
    refused_evidence["results"][0]["evidence_url"] = "https://runner:hunter3-secret@runs.agent.test/1.png"
    with web_processes(settings, 1) as (site,):
        assert from_network(site, "192.0.2.31").post(SUBMIT, content=body(data), headers=JSON).status_code == 201
        for n, bad in enumerate([refused, refused_evidence]):
            answer = from_network(site, f"192.0.2.{40 + n}").post(SUBMIT, content=body(bad), headers=JSON)
            assert answer.status_code == 400 and "secret" not in answer.text
        published = site.get("/leaderboard").text + site.get("/api/leaderboard.json").text
    assert "Leaky" in published
    for sent in (
        "<img",
        "<script>",
        "<b>",
        "\u0007",
        "\u001b",
        "\u0000",
        "\\u0007",
        "\\u001b",
        "hunter2",
        "hunter3",
        "agent:hunter",
    ):
        assert sent not in published, sent
        assert sent not in caplog.text, sent


def test_rates_are_shown_as_arc_shows_them(settings: Settings) -> None:
    outcomes = ["added_to_cart"] * 7 + ["no_cart"] * 5  # 7 of 12: ARC shows 58.3 % (32–80.7 %)
    with web_processes(settings, 1) as (site,):
        sent = from_network(site, "192.0.2.60").post(SUBMIT, content=body(a_run("rates", outcomes)), headers=JSON)
        assert sent.status_code == 201 and (sent.json()["n"], sent.json()["cart_successes"]) == (12, 7)
        entry = site.get("/api/leaderboard.json").json()["submissions"][0]
        assert (entry["rate"], entry["ci"]) == (58.3, {"low": 32, "high": 80.7})
        assert '58.3% <span class="small muted">(32–80.7%)</span>' in site.get("/leaderboard").text


def test_the_listing_is_paged_so_it_stays_small(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    import web.public.leaderboard as listing

    monkeypatch.setattr(listing, "ROWS_A_PAGE", 2)
    with web_processes(settings, 1) as (site,):
        for n in range(3):
            sent = from_network(site, f"192.0.{70 + n}.1").post(SUBMIT, content=body(a_run(f"paged {n}")), headers=JSON)
            assert sent.status_code == 201
        first, second = site.get("/leaderboard").text, site.get("/leaderboard?page=2").text
        assert first.count('<tr id="sub-') == 2 and 'href="/leaderboard?page=2"' in first
        assert second.count('<tr id="sub-') == 1 and "?page=3" not in second
        assert len(site.get("/api/leaderboard.json").json()["submissions"]) == 3  # the JSON holds them all
        assert site.get("/leaderboard?page=x", follow_redirects=False).status_code == 303
