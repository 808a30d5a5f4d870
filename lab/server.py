"""Running the lab in a background thread, for tests and for other code that needs a live lab.

    with LabServer() as lab:
        page.goto(lab.url_for("s05"))          # http://s05.lab.localhost:PORT/ (Chromium resolves *.localhost)
        httpx.get(lab.loopback_url("/cart"), headers={"Host": lab.host_for("s05")})  # httpx does not

The server binds 127.0.0.1 on a free port chosen by the OS, and `__enter__` returns only once it accepts
connections (or raises after `start_timeout` seconds). Leaving the block stops it and joins the thread.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn

from lab.app import create_app
from lab.ratelimit import LabLimits


class LabServer:
    def __init__(
        self,
        domain: str = "lab.localhost",
        trust_local_directories: bool = False,
        station_names: dict[str, str] | None = None,
        start_timeout: float = 10.0,
        log_level: str = "warning",
        receipt_key: bytes | None = None,
        limits: LabLimits | None = None,
    ) -> None:
        self.domain = domain
        self.app = create_app(domain, trust_local_directories, station_names, receipt_key, limits)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, log_level=log_level, lifespan="off", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="lab-server", daemon=True)
        self._start_timeout = start_timeout

    def host_for(self, station: str | None) -> str:
        """The Host header of a station (None: the lab index), port included."""
        name = f"{station}.{self.domain}" if station else self.domain
        return f"{name}:{self.port}"

    def url_for(self, station: str | None, path: str = "/") -> str:
        return f"http://{self.host_for(station)}{path}"

    def loopback_url(self, path: str = "/") -> str:
        """The same server by IP, for clients that do not resolve *.localhost: send Host: host_for(...)."""
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> LabServer:
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._server.should_exit = True
                raise RuntimeError(f"the lab did not start on port {self.port}")
            time.sleep(0.02)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)
