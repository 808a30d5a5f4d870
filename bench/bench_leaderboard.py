"""Benchmark: the submissions listing (/leaderboard and /api/leaderboard.json) after 1,000 submissions.

Two kinds of 1,000: (1) 1,000 accepted runs already on the board (stored through the record over five past
days, as the daily cap of 200 allows), so every page lists 1,000 rows; then (2) 1,000 more sent in a row over
HTTP from one client, as a flood would come: a few are taken, the rest are answered 429 by the caps. Then the
listing pages are loaded with Debian's `wrk` (one thread, 64 connections) when installed, else an httpx client.
The site runs in its own uvicorn process with one worker, as in bench_site.py.
Goal (issue 11): p99 of the listing page under 50 ms.

    python bench/bench_leaderboard.py [--seconds 10] [--connections 64]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "integration" / "web"))

from bench_site import free_port, measure, wait_up  # noqa: E402

SERVER = """
import sys, uvicorn
from pathlib import Path
sys.path.insert(0, {root!r})
from adapters.settings import Settings
from web.app import create_app
uvicorn.run(create_app(Settings(data_dir=Path({data!r}), site_secret="bench secret " * 4)), host="127.0.0.1",
            port={port}, log_level="warning", access_log=False)
"""
ROUTES = ("/healthz", "/leaderboard", "/leaderboard?page=20", "/api/leaderboard.json")
"""/healthz is the floor: a plain route of the same app, measured in the same run (the machine is shared)."""


def fill_the_board(data_dir: Path, count: int) -> None:
    """`count` accepted submissions, 200 a day over past days (the caps hold: each day's book counts them)."""
    from leaderboard_site import a_run

    from adapters.settings import Settings
    from adapters.wiring import build_runtime
    from domain.leaderboards.arc_validation import check_submission

    now = datetime.now(UTC)
    with build_runtime(Settings(data_dir=data_dir, site_secret="bench secret " * 4)) as runtime:
        record = runtime.record
        for n in range(count):
            day = now - timedelta(days=1 + n // 200)
            record.clock = lambda day=day: day
            outcomes = ["added_to_cart"] * (n % 11) + ["no_cart"] * (12 - n % 11)
            submission = check_submission(a_run(f"bench run {n}", outcomes), now)
            record.submit_leaderboard_run(submission, network_key=f"bench network {n // 5}")


def flood(url: str, count: int) -> Counter[int]:
    """`count` distinct runs in a row from one client; the answers' status codes."""
    from leaderboard_site import a_run, body

    answers: Counter[int] = Counter()
    with httpx.Client(base_url=url, headers={"content-type": "application/json"}) as client:
        for n in range(count):
            answers[client.post("/api/leaderboard/submit", content=body(a_run(f"flood {n}"))).status_code] += 1
    return answers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--submissions", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "var"
        began = time.perf_counter()
        fill_the_board(data, args.submissions)
        print(f"{args.submissions} submissions stored in {time.perf_counter() - began:.1f} s")
        port = free_port()
        code = SERVER.format(root=str(ROOT), data=str(data), port=port)
        server = subprocess.Popen([sys.executable, "-c", code])
        try:
            url = f"http://127.0.0.1:{port}"
            wait_up(url)
            began = time.perf_counter()
            answers = flood(url, args.submissions)
            print(
                f"{args.submissions} more in a row over HTTP in {time.perf_counter() - began:.1f} s: "
                + ", ".join(f"{count} x {status}" for status, count in sorted(answers.items()))
            )
            began = time.perf_counter()
            rows = httpx.get(url + "/leaderboard", timeout=30).text.count('<tr id="sub-')
            print(f"first render of /leaderboard with {rows} rows: {(time.perf_counter() - began) * 1000:.0f} ms")
            tool = "wrk" if shutil.which("wrk") else "httpx (wrk is not installed)"
            print(f"load: {tool}, {args.connections} connections, {args.seconds} s a route")
            results = {route: measure(url + route, args.seconds, args.connections) for route in ROUTES}
            for route, (rate, p99) in results.items():
                print(f"{route:22} {rate:9.0f} req/s  p99 {p99:6.1f} ms  {'PASS' if p99 < 50 else 'FAIL'}")
        finally:
            server.kill()
            server.wait(timeout=30)
    return 0 if results["/leaderboard"][1] < 50 else 1


if __name__ == "__main__":
    raise SystemExit(main())
