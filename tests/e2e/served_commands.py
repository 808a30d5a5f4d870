"""A `canitbuy ... serve` command started as a user starts it, and stopped as Ctrl-C stops it; shared by the
end-to-end tests of the commands and of their faults."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx


@contextlib.contextmanager
def serving(args: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """The command running in its own session (no terminal), in the data folder `env` names."""
    process = subprocess.Popen([sys.executable, "-m", "ops.cli", *args], cwd=env["CANITBUY_DATA_DIR"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # as Ctrl-C stops it
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def answers(url: str, host: str | None = None, seconds: float = 60) -> httpx.Response:
    """The first answer at `url` within `seconds` (a server still starting refuses connections)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return httpx.get(url, headers={"Host": host} if host else {}, timeout=5)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
