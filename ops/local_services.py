"""The services a fresh checkout lacks, started in-process: the lab, and the agent's Web Bot Auth key directory.

With `CANITBUY_LAB_URL` set, nothing is started: the stations are elsewhere. Otherwise the lab runs on a free
loopback port, and since nothing serves our key directory over https locally, it is served on loopback too and
the lab is told to trust loopback directories (s13's bot gate must see a signed agent pass, as in production).
The lab signs receipts with the key kept in the data dir, so they verify after the command ends. It holds
clients to the course's pace in memory, our agent's key on a budget of its own (lab/ratelimit.py).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import uvicorn

from adapters.botauth import directory_app, keyid_of, load_or_create_key
from adapters.settings import Settings

RECEIPT_KEY_FILE = "lab-receipt.key"
"""The lab's receipt key in the data dir (the file `canitbuy lab serve` uses by default)."""


@dataclass(frozen=True)
class Services:
    lab_url: str
    """Scheme, host and port where the stations answer (sNN.<domain> on this port)."""
    directory_url: str | None
    """The origin serving our key directory (Signature-Agent), or None to use the settings' one."""


class _ThreadedServer:
    def __init__(self, app: object) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off",  # type: ignore[arg-type]
                                access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="key-directory", daemon=True)

    def __enter__(self) -> _ThreadedServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the key directory server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)


def station_names() -> dict[str, str]:
    from domain.courses.course import load_course

    return {s.code: s.name for s in load_course().stations}


@contextmanager
def local_services(settings: Settings) -> Iterator[Services]:
    if settings.lab_url:
        yield Services(settings.lab_url, None)
        return
    from lab.ratelimit import LabLimits
    from lab.receipts import load_or_create_seed
    from lab.server import LabServer

    with ExitStack() as stack:
        directory = None
        key = load_or_create_key(settings.agent_signing_key, settings.data_dir)
        if not settings.agent_directory_url:
            server = stack.enter_context(_ThreadedServer(directory_app(key)))
            directory = f"http://127.0.0.1:{server.port}"
        # The same key file as `canitbuy lab serve`: receipts of runs made here stay verifiable after it stops.
        seed = load_or_create_seed(settings.data_dir / RECEIPT_KEY_FILE)
        lab = stack.enter_context(LabServer(domain=settings.lab_domain, trust_local_directories=True,
                                            station_names=station_names(), receipt_key=seed,
                                            limits=LabLimits(own_keyids=frozenset({keyid_of(key)}),
                                                             own_networks=("127.0.0.1/32", "::1/128"))))
        yield Services(f"http://127.0.0.1:{lab.port}", directory)
