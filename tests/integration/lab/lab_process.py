"""`canitbuy lab serve` in a process of its own on a free port, as the lab runs in production (a real server, its
own interpreter: a flood against it does not share the test's GIL)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[3]
DOMAIN = "lab.localhost"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LabProcess:
    def __init__(self, port: int, process: subprocess.Popen[bytes], log: Path) -> None:
        self.port, self.process, self.log = port, process, log

    def host_for(self, station: str | None) -> str:
        return f"{station}.{DOMAIN}:{self.port}" if station else f"{DOMAIN}:{self.port}"

    def url_for(self, station: str | None, path: str = "/") -> str:
        return f"http://{self.host_for(station)}{path}"

    def loopback_url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def lab_process(data_dir: Path, *options: str) -> Iterator[LabProcess]:
    port = free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
    env.update(PYTHONPATH=str(ROOT), CANITBUY_DATA_DIR=str(data_dir))
    log = data_dir / f"lab-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "ops.cli", "lab", "serve", "--port", str(port), *options],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
        )
    served = LabProcess(port, process, log)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"the lab exited: {log.read_text()}")
            try:
                httpx.get(served.loopback_url("/static/lab.css"), headers={"Host": served.host_for(None)}, timeout=2)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise AssertionError("the lab did not start") from None
                time.sleep(0.1)
        yield served
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
