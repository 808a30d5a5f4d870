"""A setting or a file at fault is one line naming it: the command, run as a user types it in its own process,
says which database, which variable or which file is wrong (exit 1), never a library's words alone.

Before, a PostgreSQL that did not answer was `OperationalError: couldn't get a connection after 10.00 sec` or
psycopg's raw wording, depending on the command.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_usage_errors import canitbuy, one_line

NOWHERE = "postgresql://127.0.0.1:1/x"


@pytest.mark.parametrize("args", [["db", "migrate"], ["week", "show", "--week", "2026-W49"]])
def test_a_database_that_does_not_answer_is_named_with_why(args: list[str], tmp_path: Path) -> None:
    line = one_line(canitbuy(args, tmp_path, CANITBUY_DATABASE_URL=NOWHERE), 1)
    assert "cannot reach the database (PostgreSQL at 127.0.0.1:1): connection refused" in line, line


def test_a_folder_where_the_embedded_database_should_be_is_named(tmp_path: Path) -> None:
    (tmp_path / "canitbuy.sqlite3").mkdir()
    line = one_line(canitbuy(["week", "show", "--week", "2026-W49"], tmp_path), 1)
    assert f"the database {tmp_path / 'canitbuy.sqlite3'} (SQLite) cannot be read" in line, line


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("CANITBUY_DATABASE_URL", "postgresql://[::1", "CANITBUY_DATABASE_URL is not an address: Invalid IPv6 URL"),
        ("CANITBUY_DATABASE_URL", "postgresql://h:99999/x", "CANITBUY_DATABASE_URL is not an address: Port out of"),
        ("CANITBUY_REDIS_URL", "redis://[::1", "CANITBUY_REDIS_URL is not an address: Invalid IPv6 URL"),
        ("CANITBUY_AGENT_SIGNING_KEY", "garbage", "CANITBUY_AGENT_SIGNING_KEY must be a base64url Ed25519 private key"),
        ("CANITBUY_CONCURRENCY", "\u0663", "CANITBUY_CONCURRENCY must be a whole number"),
        ("CANITBUY_WEEKLY_CAP_USD", "inf", "CANITBUY_WEEKLY_CAP_USD must be a finite number"),
        ("CANITBUY_WEEKLY_CAP_USD", "1e999", "CANITBUY_WEEKLY_CAP_USD must be a finite number"),
        ("CANITBUY_CHROMIUM", "/etc/hostname", "CANITBUY_CHROMIUM '/etc/hostname' is not an executable program"),
    ],
)
def test_a_malformed_setting_is_refused_at_start_naming_it(name: str, value: str, said: str, tmp_path: Path) -> None:
    line = one_line(canitbuy(["lab", "serve", "--port", "8797"], tmp_path, **{name: value}), 1)
    assert said in line, line


def test_a_garbage_agent_key_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "agent-signing-key").write_text("garbage!\n")
    line = one_line(canitbuy(["lab", "serve", "--port", "8797"], tmp_path), 1)
    assert f"the agent's key file {tmp_path / 'agent-signing-key'} must be" in line, line


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--redis-url", "redis://[::1"], "--redis-url: 'redis://[::1' is not an address"),
        (["--redis-url", "garbage"], "--redis-url: 'garbage' must start with redis://"),
        (["--trusted-proxy", "garbage"], "--trusted-proxy: 'garbage' is not an address or network"),
        (["--own-network", "999.1.1.1"], "--own-network: '999.1.1.1' is not an address or network"),
        (["--domain", ""], "--domain: '' is not a DNS name"),
        (["--domain", "a b/../c"], "--domain: 'a b/../c' is not a DNS name"),
    ],
)
def test_a_bad_lab_option_is_a_usage_error_naming_it(args: list[str], said: str, tmp_path: Path) -> None:
    line = one_line(canitbuy(["lab", "serve", "--port", "8797", *args], tmp_path), 2)
    assert said in line, line


def test_a_binary_receipt_key_is_named(tmp_path: Path) -> None:
    key = tmp_path / "bin.key"
    key.write_bytes(b"\x00\xff\xfe")
    line = one_line(canitbuy(["lab", "serve", "--port", "8797", "--receipt-key", str(key)], tmp_path), 1)
    assert f"the receipt key {key} (--receipt-key) must hold a base64url 32-byte Ed25519 seed: it is binary" in line


def test_an_empty_web_host_is_a_usage_error(tmp_path: Path) -> None:
    line = one_line(canitbuy(["web", "serve", "--host", "", "--port", "8796"], tmp_path), 2)
    assert "--host: an empty host would bind every interface" in line, line


def test_a_run_cut_short_says_why_on_stderr_and_in_json(tmp_path: Path) -> None:
    args = ["run", "--station", "s01", "--model", "baseline-naive", "--lab-url", "http://127.0.0.1:1", "--json"]
    done = canitbuy(args, tmp_path)
    line = one_line(done, 1)
    assert line.startswith("canitbuy: run cut short (our_error): "), line
    summary = json.loads(done.stdout.splitlines()[0])
    assert summary["outcome"] == "cut_short" and summary["cause"] == "our_error" and summary["detail"], summary
