"""Every benchmark, one after the other, each figure printed with its goal.

Run it through the set-up command, which first installs what the benchmarks need (Debian's `wrk`, the Python
packages, PostgreSQL and Redis running):

    bash ops/dev bench                 # every benchmark, full length (about half an hour on 2 cores)
    bash ops/dev bench --quick         # short durations: shows each one works, the figures are rough
    bash ops/dev bench --only site,append

The peer benchmark needs browser-use 0.13 in a venv of its own (never a dependency of the project): this script
makes it at /tmp/bu-venv with pip when it is missing. Exit 0 when every benchmark ran and met its goal.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
BU_VENV = Path(os.environ.get("BU_VENV", "/tmp/bu-venv"))


@dataclass(frozen=True)
class Bench:
    name: str
    script: str
    goal: str
    figure: str
    """A regular expression matching the output lines that carry the figure."""
    quick: list[str] = field(default_factory=list)
    needs: str = ""
    """A program or set-up the benchmark cannot run without (checked before it starts)."""


BENCHES = [
    Bench("append", "bench_append.py", "step appends of 4, 16 and 64 runs in flight >= 0.5 of a raw INSERT",
          r"events/s|goal", ["--runs-per-level", "32"]),
    Bench("replay", "bench_replay.py", "rebuild of a year's record under 10 s, against the raw-read floor",
          r"goal|rebuild|floor", ["--weeks", "2", "--rounds", "1"]),
    Bench("site", "bench_site.py",
          "/ranking and /matrix at >= 0.8 of the plain route's requests/s, p99 < 20 ms, asked as browsers ask",
          r"req/s|load by", ["--seconds", "2", "--rounds", "1", "--connections", "16"], needs="wrk"),
    Bench("agent-step", "bench_agent_step.py", "harness step p50 <= 1.2 x the floor",
          r"ratio|p50", ["--steps", "4", "--rounds", "1"]),
    Bench("peer", "bench_peer_browser_use.py", "our step p50 below browser-use's, and <= 1.5 x the floor",
          r"ratio", ["--steps", "4", "--rounds", "1"], needs="browser-use"),
    Bench("course", "bench_course.py", "the course at >= 0.9 of the floor's steps/s", r"ratio|wall-clock"),
    Bench("arq-scaling", "bench_arq_scaling.py", "2 workers near twice as fast as 1 (ratio 2.00 is linear)",
          r"scaling ratio|worker"),
]


class Missing(Exception):
    pass


def ready(bench: Bench) -> list[str]:
    """Extra arguments once what the benchmark needs is there; Missing when it cannot be had."""
    if bench.needs == "wrk" and not shutil.which("wrk"):
        raise Missing("Debian's wrk is not installed (bash ops/dev bench installs it)")
    if bench.needs == "browser-use":
        python = BU_VENV / "bin" / "python"
        if not python.exists():
            print(f"  making {BU_VENV} with browser-use 0.13 (pip)", flush=True)
            made = subprocess.run([sys.executable, "-m", "venv", str(BU_VENV)], check=False)
            if made.returncode == 0:
                made = subprocess.run([str(python), "-m", "pip", "install", "-q", "browser-use==0.13.*"], check=False)
            if made.returncode != 0:
                raise Missing(f"browser-use 0.13 could not be installed in {BU_VENV}")
        return ["--bu-python", str(python)]
    return []


def run(bench: Bench, quick: bool) -> tuple[str, list[str]]:
    args = [*ready(bench), *(bench.quick if quick else [])]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-O", str(HERE / bench.script), *args], cwd=HERE.parent,
                          capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if re.search(bench.figure, line)]
    took = f"{time.monotonic() - started:.0f} s"
    # Some benchmarks exit 0 and say in words that a goal was missed: the words decide.
    if any(re.search(r"NOT met|BELOW GOAL|missed", line) for line in lines):
        return f"BELOW GOAL ({took})", lines
    if done.returncode == 0:
        return f"met ({took})", lines
    if lines:  # it measured, and said the figure is below its goal
        return f"BELOW GOAL ({took})", lines
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return f"FAILED ({took}): {last}", lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short durations: a smoke run, rough figures")
    parser.add_argument("--only", help=f"comma-separated names: {', '.join(b.name for b in BENCHES)}")
    args = parser.parse_args()
    chosen = BENCHES
    if args.only:
        names = [n.strip() for n in args.only.split(",")]
        unknown = [n for n in names if n not in {b.name for b in BENCHES}]
        if unknown:
            print(f"run_all: no benchmark named {unknown[0]!r}", file=sys.stderr)
            return 2
        chosen = [b for b in BENCHES if b.name in names]
    failed = 0
    for bench in chosen:
        print(f"== {bench.name} ({bench.script})\n   goal: {bench.goal}", flush=True)
        try:
            status, lines = run(bench, args.quick)
        except Missing as why:
            status, lines = f"NOT RUN: {why}", []
        for line in lines:
            print(f"   {line.strip()}")
        print(f"   {status}", flush=True)
        failed += not status.startswith("met")
    print(f"{len(chosen) - failed} of {len(chosen)} benchmarks met their goal" + (" (quick run)" if args.quick else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
