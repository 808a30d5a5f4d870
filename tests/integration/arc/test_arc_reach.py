"""`arc run` checks that the stores answer before it records a batch (ops/arc_files.py `unreachable_stores`,
ops/commands/arc.py `_reach`): one HTTP request a store, a few at once, each bounded in time; with fewer than 10
stores answering (ARC counts a run only with at least 10 results) the command exits 1 and records nothing. Real
HTTP servers on this machine stand for stores; the command runs in its own process on ARC-100, whose stores this
machine does not reach."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.leaderboards import arc
from domain.leaderboards.arc import arc_100_v1
from ops.arc_files import unreachable_stores
from ops.cli import CommandError
from ops.commands.arc import _reach

ROOT = Path(__file__).parents[3]


class Store(BaseHTTPRequestHandler):
    """A store that answers HEAD 403 (a bot wall still answers), but /no-head refuses HEAD (405) and answers GET;
    /slow waits 0.3 s, counting how many requests it holds at once."""

    held = 0
    most = 0
    lock = threading.Lock()
    gets: list[str] = []  # noqa: RUF012 - shared on purpose, read by the tests

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/slow"):
            with Store.lock:
                Store.held += 1
                Store.most = max(Store.most, Store.held)
            time.sleep(0.3)
            with Store.lock:
                Store.held -= 1
        self.send_response(405 if self.path == "/no-head" else 403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        Store.gets.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def store() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Store)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def silent() -> Iterator[str]:
    """A host that takes the connection (the kernel's backlog) and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


def closed_port() -> str:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now: the connection is refused
    return f"http://127.0.0.1:{port}"


def test_any_http_answer_is_a_store_that_answers_and_each_failure_says_why(store: str, silent: str) -> None:
    closed = closed_port()
    urls = [
        f"{store}/products/a",
        f"{store}/no-head",
        f"{closed}/products/b",
        f"{silent}/products/c",
        "https://shop.nowhere.invalid/products/d",
    ]
    seen: list[tuple[int, int]] = []
    began = time.monotonic()
    why = anyio.run(lambda: unreachable_stores(urls, timeout=1.0, checked=lambda d, r: seen.append((d, r))))
    assert time.monotonic() - began < 5  # each store bounded by its timeout, checked at once
    assert set(why) == set(urls[2:])  # the 403 answers; the 405 to HEAD answers its GET
    assert "/no-head" in Store.gets
    assert why[urls[2]] == f"store unreachable from this machine ({closed.removeprefix('http://')}: Connection refused)"
    assert (
        why[urls[3]] == f"store unreachable from this machine ({silent.removeprefix('http://')}: no answer within 1 s)"
    )
    assert why[urls[4]].startswith("store unreachable from this machine (shop.nowhere.invalid: ")
    assert all("\n" not in w for w in why.values())
    assert [d for d, _ in seen] == [1, 2, 3, 4, 5] and seen[-1] == (5, 2)  # progress: each store as it ends


def test_at_most_so_many_stores_are_asked_at_once(store: str) -> None:
    Store.most = 0
    urls = [f"{store}/slow/{n}" for n in range(9)]
    assert anyio.run(lambda: unreachable_stores(urls, at_once=3)) == {}
    assert Store.most == 3


def starts(urls: list[str]) -> list[tuple[arc.TestItem, str]]:
    return [(arc.TestItem(f"arc100-v1-{n:03d}", "x", url), url) for n, url in enumerate(urls, start=1)]


def test_ten_stores_answering_are_enough_and_the_rest_are_named(store: str) -> None:
    closed = closed_port()
    rows = starts([f"{store}/p/{n}" for n in range(10)] + [f"{closed}/p/1", f"{closed}/p/2"])
    why = _reach(rows, "lab.localhost")
    assert set(why) == {f"{closed}/p/1", f"{closed}/p/2"}


def test_fewer_than_ten_answering_records_nothing_and_says_so_in_one_line(store: str) -> None:
    closed = closed_port()
    rows = starts([f"{store}/p/{n}" for n in range(9)] + [f"{closed}/p/{n}" for n in range(3)])
    with pytest.raises(CommandError) as refused:
        _reach(rows, "lab.localhost")
    message = str(refused.value)
    assert message == (
        f"9 of 12 stores answer from this machine (one HTTP request each, 5 s; e.g. "
        f"{closed.removeprefix('http://')}: Connection refused); ARC counts a run only with at least "
        "10 results, so no batch was recorded"
    )


def test_a_trial_of_fewer_than_ten_rows_runs_when_one_store_answers(store: str) -> None:
    closed = closed_port()
    assert set(_reach(starts([f"{store}/p/1", f"{closed}/p/2"]), "lab.localhost")) == {f"{closed}/p/2"}
    with pytest.raises(CommandError, match=r"^0 of 2 stores answer .*; nothing could run, so no batch was recorded$"):
        _reach(starts([f"{closed}/p/1", f"{closed}/p/2"]), "lab.localhost")


def test_our_labs_rows_are_not_checked() -> None:
    closed = closed_port().replace("127.0.0.1", "s01.lab.localhost")
    assert _reach(starts([closed] * 12), "lab.localhost") == {}


def events(data_dir: Path) -> list[str]:
    with build_runtime(Settings(data_dir=data_dir)) as runtime:
        recorder = runtime.record.repository.event_store.recorder
        return [n.topic for n in recorder.select_notifications(start=1, limit=10_000)]  # type: ignore[attr-defined]


def test_arc_run_on_arc_100_where_no_store_answers_exits_1_and_records_no_batch(tmp_path: Path) -> None:
    ids = ",".join(item.id for item in list(arc_100_v1().items)[:12])
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")} | {"CANITBUY_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ops.cli",
            "arc",
            "run",
            "--test-set",
            "arc-100.json",
            "--ids",
            ids,
            "--model",
            "baseline-robust",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and not done.stdout and "Traceback" not in done.stderr
    *progress, last = done.stderr.strip().splitlines()
    assert progress == [f"checking the stores: {n} of 12 checked, 0 answer" for n in range(1, 13)]
    assert re.fullmatch(
        r"canitbuy: 0 of 12 stores answer from this machine \(one HTTP request each, 5 s; e\.g\. "
        r"www\.apc\.fr: .+\); ARC counts a run only with at least 10 results, so no batch was "
        r"recorded",
        last,
    ), last
    topics = events(tmp_path)
    assert not [t for t in topics if "ArcBatch" in t or ":Run." in t], topics
