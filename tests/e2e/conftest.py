"""Real things for the end-to-end tests of the workers: a lab on loopback (trusting loopback key directories,
as a local run does), the agent's key directory, a Redis database of our own, and a way to kill Chromium."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from adapters.settings import Settings
from ops.local_services import Services, local_services

REDIS_DB = int(os.environ.get("CANITBUY_TEST_REDIS_DB", "11"))
"""Our own Redis database number, flushed before each test: other suites on this Redis use other numbers."""


@dataclass(frozen=True)
class LocalLab:
    services: Services
    signing_key: str
    """The seed the key directory serves the public half of: every test process signs with it."""

    def settings(self, data_dir: Path, **changes: object) -> Settings:
        return Settings(data_dir=data_dir, lab_url=self.services.lab_url, agent_signing_key=self.signing_key,
                        agent_directory_url=self.services.directory_url, **changes)  # type: ignore[arg-type]

    def env(self) -> dict[str, str]:
        """Environment for a worker process that must reach this lab and sign with this key."""
        return {"CANITBUY_LAB_URL": self.services.lab_url, "CANITBUY_AGENT_SIGNING_KEY": self.signing_key,
                "CANITBUY_AGENT_DIRECTORY_URL": self.services.directory_url or ""}


@pytest.fixture(scope="session")
def local_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalLab]:
    """The lab and the key directory, in-process, shared by the session."""
    keys = tmp_path_factory.mktemp("keys")
    with local_services(Settings(data_dir=keys)) as running:
        yield LocalLab(running, (keys / "agent-signing-key").read_text().strip())


@pytest.fixture
def redis_url() -> Iterator[str]:
    url = f"redis://127.0.0.1:6379/{REDIS_DB}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


def chromium_pids(root: int) -> list[int]:
    """Chromium browser processes (not its helpers) descending from `root`, read from /proc."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == root:
                return True
        return False

    return [p for p, cmd in commands.items() if "chromium" in cmd and "--type=" not in cmd and descends(p)]


def kill_chromium(root: int) -> int:
    pids = chromium_pids(root)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return len(pids)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that restart shared servers run after every other test of the session."""
    items.sort(key=lambda item: item.get_closest_marker("disruptive") is not None)


REPO = Path(__file__).resolve().parents[2]


def worker_env(local_lab: LocalLab, *, database_url: str, redis_url: str, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_") and k != "AI_GATEWAY_API_KEY"}
    env.update(local_lab.env())
    env.update({"CANITBUY_DATABASE_URL": database_url, "CANITBUY_REDIS_URL": redis_url,
                "CANITBUY_DATA_DIR": str(data_dir), "CANITBUY_CONCURRENCY": "2"})
    return env


def start_worker(env: dict[str, str], log: Path, *, lease_seconds: float = 4.0) -> subprocess.Popen[bytes]:
    """A real `canitbuy worker` process (its own session, so its Chromium can be killed with it)."""
    handle = log.open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "ops.cli", "worker", "--lease-seconds", str(lease_seconds)],
        env=env, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
    )


def stop_worker(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
