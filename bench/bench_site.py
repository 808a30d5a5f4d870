"""Benchmark: /ranking and /matrix of a published week with 5 models, against a plain-text route of the same app
in the same run.

The site runs in its own uvicorn process (one worker; access log off, as behind a proxy that logs); the load
comes from another process: Debian's `wrk` (`bash ops/dev bench` installs it). Without wrk the script refuses
to run: a Python client on the same 2 cores measures itself, not the site (it once reported 233 requests/s).
Every route is measured twice: as a browser asks (`Accept-Encoding: gzip, deflate, br`: the pages come gzipped)
and without Accept-Encoding (the identity bodies), the plain route too, so each ratio compares like with like.
Goal (issue 12), read on the browser-like figures: each page at least 0.8 of the plain route's requests/s at 64
connections, p99 under 20 ms. Each figure is the median of interleaved rounds; beside it, the server process's CPU
time a request (from /proc) and its ratio to the plain route's, which a shared machine's bursts disturb far less.
On two CPUs or more the server and wrk each keep one (`--no-pin` leaves them to the scheduler).

    python bench/bench_site.py [--seconds 10] [--rounds 3] [--connections 64]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "integration" / "web"))

from process_cpu import cpu_seconds  # noqa: E402

MODELS = ("model-alpha", "model-beta", "model-gamma", "model-delta", "model-epsilon")
ROUTES = ("/healthz", "/ranking", "/matrix")
BROWSER = "gzip, deflate, br"
"""The Accept-Encoding every browser sends (Chrome and Firefox add zstd over https only)."""
WAYS = {"browser": BROWSER, "identity": None}
"""How each route is asked for: the goal is read on the first."""
GOAL_RATIO, GOAL_P99_MS = 0.8, 20.0
SERVER = """
import sys, uvicorn
from pathlib import Path
sys.path.insert(0, {root!r})
from adapters.settings import Settings
from web.app import create_app
uvicorn.run(create_app(Settings(data_dir=Path({data!r}))), host="127.0.0.1", port={port}, log_level="warning",
            access_log=False)
"""


def build_week(data_dir: Path) -> str:
    from site_data import make_week

    from adapters.settings import Settings
    from adapters.wiring import build_runtime

    with build_runtime(Settings(data_dir=data_dir)) as runtime:
        return make_week(runtime, models=MODELS).week


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_up(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError("the site did not start")


def pinned_to(cpu: int | None) -> Callable[[], None] | None:
    """A child's start-up hook keeping it on one CPU (None: the scheduler's choice)."""
    return None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))


def pins(pin: bool) -> tuple[int | None, int | None]:
    """(server's CPU, wrk's CPU): on two CPUs or more the server and the load each keep a CPU of their own, so the
    scheduler moving them onto one CPU (and the caches they lose on the way) does not land in one route's round."""
    cpus = sorted(os.sched_getaffinity(0))
    return (cpus[0], cpus[1]) if pin and len(cpus) >= 2 else (None, None)


def with_wrk(url: str, seconds: int, connections: int, threads: int = 1,
             accept_encoding: str | None = None, cpu: int | None = None) -> tuple[float, float]:
    # One wrk thread by default: on 2 cores the server's event loop takes one and the load its own; a second
    # wrk thread would take the server's core from it and measure the machine's contention, not the site.
    header = ["-H", f"Accept-Encoding: {accept_encoding}"] if accept_encoding else []
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", *header, url],
                         capture_output=True, text=True, check=True, preexec_fn=pinned_to(cpu)).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    if "Non-2xx" in out:
        raise RuntimeError(f"{url}: some answers were not 2xx\n{out}")
    return rate, p99


def measure(url: str, seconds: int, connections: int, wrk_threads: int = 1,
            accept_encoding: str | None = None, pid: int | None = None, wrk_cpu: int | None = None
            ) -> tuple[float, float, float]:
    """(requests/s, p99 ms, the server's CPU µs a request). The last holds up where wall-clock figures do not:
    on a shared machine another process's burst takes requests/s from one route's round, not CPU a request."""
    before = cpu_seconds(pid) if pid else 0.0
    rate, p99 = with_wrk(url, seconds, connections, wrk_threads, accept_encoding, wrk_cpu)
    spent = cpu_seconds(pid) - before if pid else 0.0
    return rate, p99, spent / max(rate * seconds, 1) * 1e6


def check_encodings(url: str) -> None:
    """Render once (the cache is what we measure) and check that a browser is sent gzip, anyone else identity:
    otherwise the two sets of figures would measure the same bytes."""
    for route in ROUTES[1:]:
        gzipped = httpx.get(url + route, headers={"Accept-Encoding": BROWSER}, timeout=30)
        identity = httpx.get(url + route, headers={"Accept-Encoding": ""}, timeout=30)
        gzipped.raise_for_status()
        identity.raise_for_status()
        if gzipped.headers.get("content-encoding") != "gzip" or "content-encoding" in identity.headers:
            raise RuntimeError(f"{route}: gzip is not served to browsers only")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10, help="each measurement's length")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of every route, interleaved; each figure is the median of its rounds")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--wrk-threads", type=int, default=1, help="wrk threads (default 1: see with_wrk)")
    parser.add_argument("--no-pin", action="store_true", help="leave the server and wrk to the scheduler (see pins)")
    args = parser.parse_args()
    server_cpu, wrk_cpu = pins(not args.no_pin)
    if not shutil.which("wrk"):
        print("bench_site: Debian's wrk is not installed; run `bash ops/dev bench` (it installs wrk)", file=sys.stderr)
        return 2
    data_dir = Path(tempfile.mkdtemp(prefix="canitbuy-bench-site-")) / "var"
    week = build_week(data_dir)
    port = free_port()
    code = SERVER.format(root=str(ROOT), data=str(data_dir), port=port)
    server = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                              preexec_fn=pinned_to(server_cpu))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(url)
        httpx.get(url + ROUTES[0], timeout=30).raise_for_status()
        check_encodings(url)
        print(f"week {week}, {len(MODELS)} models, {args.connections} connections, {args.seconds} s each, "
              f"median of {args.rounds} interleaved rounds, "
              f"load by wrk; browser = Accept-Encoding: {BROWSER} (the goal is read on these), identity = none; "
              + ("server and wrk left to the scheduler" if server_cpu is None else
                 f"server on CPU {server_cpu}, wrk on CPU {wrk_cpu}"))
        # Every route warmed first (the server's first seconds under load are slower: sockets, allocator, caches),
        # so the plain route, measured first, is not measured cold.
        for route in ROUTES:
            for encoding in WAYS.values():
                measure(url + route, 2, args.connections, args.wrk_threads, encoding, wrk_cpu=wrk_cpu)
        # Route by route, both ways in turn, then again for every round: a shared machine's load drifts, and a
        # stall of a few seconds lands in one route's round rather than in one route's only figure.
        rounds: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for _ in range(args.rounds):
            for route in ROUTES:
                for way, encoding in WAYS.items():
                    rounds.setdefault((route, way), []).append(measure(
                        url + route, args.seconds, args.connections, args.wrk_threads, encoding, server.pid, wrk_cpu))
        results = {key: tuple(statistics.median(figures[i] for figures in got) for i in range(3))
                   for key, got in rounds.items()}
    finally:
        server.terminate()
        server.wait(timeout=10)
    ok = True
    for way in WAYS:
        plain, _, plain_cpu = results[ROUTES[0], way]
        for route in ROUTES:
            rate, p99, cpu = results[route, way]
            ratio = rate / plain
            if way != "browser":
                verdict = "(for comparison)"
            else:
                passes = route == ROUTES[0] or (ratio >= GOAL_RATIO and p99 < GOAL_P99_MS)
                ok = ok and passes
                verdict = "ok" if passes else "BELOW GOAL"
            print(f"{route:10} {way:8} {rate:9.0f} req/s  p99 {p99:6.1f} ms  ratio {ratio:4.2f}  "
                  f"server CPU {cpu:5.0f} µs/req, ratio {plain_cpu / cpu:4.2f}  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
