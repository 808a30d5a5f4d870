"""Issue 18, items 5-7: the key-directory fetch is bounded as a whole, refuses IPv6 forms of private IPv4
addresses, and a malformed signature field is a rejected signature (the gate), never a 500. Against real local
servers: one that trickles its bytes, one that sends a gzip bomb, and listeners that count the fetches."""

from __future__ import annotations

import gzip
import selectors
import socket
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

import anyio
import pytest

from lab.botauth.directory import TIMEOUT_S, DirectoryError, KeyDirectory, public_address

T = TypeVar("T")

AGENT_UA = "CanItBuyAgent/1.0"


def run(fn: Callable[..., Awaitable[T]], *args: object) -> T:
    """anyio.run in a thread of its own: this session's sync Playwright may hold the main thread's event loop."""
    answer: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            answer.append(anyio.run(fn, *args))
        except BaseException as error:  # noqa: BLE001 - handed back to the test's thread
            failure.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return answer[0]


def gated(response) -> bool:
    return response.status_code == 403 and "Verify you are human" in response.text


@pytest.fixture
def trickling_origin() -> Iterator[str]:
    """A directory that sends its headers, then one byte every half second (for 20 s at most)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(4096)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n")
            for _ in range(40):
                try:
                    connection.sendall(b" ")
                except OSError:
                    return  # the fetch gave up
                time.sleep(0.5)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_one_deadline_bounds_the_whole_fetch(trickling_origin: str) -> None:
    started = time.monotonic()
    with pytest.raises(DirectoryError):
        run(KeyDirectory(trust_local=True).keys, trickling_origin)
    assert time.monotonic() - started < TIMEOUT_S + 1.5


@pytest.fixture
def gzip_bomb_origin() -> Iterator[str]:
    """A directory whose 64 KB gzip body would be 64 MB unpacked."""
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)

    class Bomb(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(bomb)))
            self.end_headers()
            self.wfile.write(bomb)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Bomb)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_bytes_are_counted_as_sent_so_a_gzip_bomb_stays_small(gzip_bomb_origin: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(DirectoryError):
            run(KeyDirectory(trust_local=True).keys, gzip_bomb_origin)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"fetching the directory took {peak // (1024 * 1024)} MB"


class CountingListeners:
    """Listeners on loopback that count the connections made to them (each is a directory fetch), then hang up."""

    def __init__(self, count: int) -> None:
        self.sockets = [socket.create_server(("127.0.0.1", 0)) for _ in range(count)]
        self.accepted = 0
        self._selector = selectors.DefaultSelector()
        for listener in self.sockets:
            listener.setblocking(False)
            self._selector.register(listener, selectors.EVENT_READ)
        self._stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        deadline = time.monotonic() + 60
        while not self._stop.is_set() and time.monotonic() < deadline:
            for key, _ in self._selector.select(timeout=0.1):
                connection, _ = key.fileobj.accept()  # type: ignore[union-attr]
                self.accepted += 1
                connection.close()

    @property
    def origins(self) -> list[str]:
        return [f"http://127.0.0.1:{s.getsockname()[1]}" for s in self.sockets]

    def close(self) -> None:
        self._stop.set()
        for listener in self.sockets:
            listener.close()


def _signatures(origins: list[str]) -> dict[str, str]:
    """One web-bot-auth signature per origin, each naming its own directory (Signature-Agent's dictionary form)."""
    now = int(time.time())
    labels = [f"sig{n}" for n in range(len(origins))]
    return {
        "Signature-Agent": ", ".join(f'{label}="{origin}"' for label, origin in zip(labels, origins, strict=True)),
        "Signature-Input": ", ".join(
            f'{label}=("@authority" "signature-agent";key="{label}");created={now};expires={now + 60};'
            f'keyid="k";tag="web-bot-auth"' for label in labels),
        "Signature": ", ".join(f"{label}=:AAAA:" for label in labels),
    }


@pytest.mark.parametrize("labels", [40, 4])
def test_one_request_makes_the_lab_fetch_at_most_two_directories(client, labels: int) -> None:
    listeners = CountingListeners(labels)
    try:
        assert gated(client("s13", AGENT_UA).get("/", headers=_signatures(listeners.origins)))
        time.sleep(0.3)
        assert listeners.accepted <= 2
    finally:
        listeners.close()


EMBEDDED_PRIVATE = [
    "::7f00:1",  # IPv4-compatible 127.0.0.1
    "::a00:1",  # IPv4-compatible 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b::c0a8:1",  # NAT64 of 192.168.0.1
    "64:ff9b:1::808:808",  # local-use NAT64: never a public route
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "fec0::1",  # site-local
]


@pytest.mark.parametrize("address", EMBEDDED_PRIVATE)
def test_an_ipv6_form_of_a_private_address_is_refused(address: str) -> None:
    with pytest.raises(DirectoryError, match="private, loopback or link-local"):
        run(public_address, address, 443)


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "2606:4700::1111"])
def test_an_ipv6_form_of_a_public_address_still_passes(address: str) -> None:
    assert run(public_address, address, 443) == address


def _one_signature(agent: str, created: str | None = None) -> dict[str, str]:
    now = int(time.time())
    return {
        "Signature-Agent": f'"{agent}"',
        "Signature-Input": f'sig1=("@authority" "signature-agent");created={created or now};expires={now + 60};'
                           f'keyid="k";tag="web-bot-auth"',
        "Signature": "sig1=:AAAA:",
    }


MALFORMED = {
    "created with 5,000 digits": _one_signature("https://agent.example", created="9" * 5000),
    "an unclosed IPv6 bracket": _one_signature("https://[::1"),
    "a port that is not a number": _one_signature("https://agent.example:abc"),
    "a port out of range": _one_signature("https://agent.example:99999"),
}


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_signature_field_meets_the_gate_not_an_error(client, kind: str) -> None:
    assert gated(client("s13", AGENT_UA).get("/", headers=MALFORMED[kind]))


@pytest.mark.parametrize("origin", ["https://[::1", "https://agent.example:abc", "https://agent.example:99999"])
@pytest.mark.parametrize("trust_local", [False, True])
def test_a_malformed_origin_is_a_directory_error(origin: str, trust_local: bool) -> None:
    with pytest.raises(DirectoryError, match="not an origin"):
        run(KeyDirectory(trust_local=trust_local).keys, origin)
