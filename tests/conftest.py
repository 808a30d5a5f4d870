"""Fixtures shared by every test: real backends, never mocks of what we own or run.

`backend` runs a test once on SQLite (the embedded default) and once on a fresh PostgreSQL database.
PostgreSQL is reached at CANITBUY_TEST_POSTGRES (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from adapters.settings import Settings

ADMIN_URL = os.environ.get("CANITBUY_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def _with_database(url: str, name: str) -> str:
    base, _, _ = url.rpartition("/")
    return f"{base}/{name}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for one test, dropped afterwards."""
    name = f"canitbuy_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(ADMIN_URL, name)
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgres"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings for one backend: SQLite in a temporary data dir, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return Settings(data_dir=tmp_path / "var")
    url = request.getfixturevalue("postgres_url")
    return Settings(data_dir=tmp_path / "var", database_url=url)


@pytest.fixture
def sqlite_settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "var")


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script, to inject into pages. `bash ops/dev test` installs it from npm and names it in
    CANITBUY_AXE_JS; run alone, the fixture installs it the same way. Without it the accessibility tests fail:
    they are never skipped."""
    named = os.environ.get("CANITBUY_AXE_JS")
    if named and Path(named).exists():
        return Path(named).read_text()
    folder = Path(os.environ.get("CANITBUY_AXE_DIR", Path.home() / ".cache" / "canitbuy-axe"))
    script = folder / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        folder.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            ["npm", "install", "--no-save", "--silent", "--prefix", str(folder), "axe-core@4"],
            capture_output=True, timeout=300, check=False,
        )
        if result.returncode != 0:
            pytest.fail(f"axe-core could not be installed from npm: {result.stderr.decode()[-500:]}")
    return script.read_text()


class OwnRedis:
    """A real redis-server of one test's own, on a free port, that the test may pause (SIGSTOP: it keeps the
    connections it accepted and answers nothing, as a Redis that hangs) and resume."""

    def __init__(self, process: subprocess.Popen[bytes], port: int) -> None:
        self.process, self.port = process, port
        self.url = f"redis://127.0.0.1:{port}/0"

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    import redis

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = OwnRedis(process, port)
    client = redis.Redis(port=port, socket_timeout=1, socket_connect_timeout=1)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("redis-server did not start") from None
                time.sleep(0.05)
        yield server
    finally:
        client.close()
        server.resume()
        process.terminate()
        process.wait(timeout=20)
