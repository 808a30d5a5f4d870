"""One lab, one key directory and one Chromium for the whole session; a fresh context per run."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import uvicorn

from adapters.botauth import BotAuthSigner, directory_app, load_or_create_key
from adapters.browser.playwright_browser import PlaywrightBrowser
from lab.server import LabServer


class ThreadedApp:
    """A Starlette app on a free loopback port, in a thread (a real HTTP server, not a mock)."""

    def __init__(self, app: object) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",  # type: ignore[arg-type]
                                lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ThreadedApp:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def signer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotAuthSigner]:
    key = load_or_create_key(None, Path(tmp_path_factory.mktemp("agent-key")))
    with ThreadedApp(directory_app(key)) as directory:
        yield BotAuthSigner(key, directory.url)


@pytest.fixture(scope="session")
def lab() -> Iterator[LabServer]:
    with LabServer(trust_local_directories=True) as server:
        yield server


@pytest.fixture(scope="session")
async def browser(signer: BotAuthSigner) -> AsyncIterator[PlaywrightBrowser]:
    async with PlaywrightBrowser(signer) as shared:
        yield shared
