"""Run the whole test suite as separate pytest processes, one a test folder, two at a time, and add up the results.

Why separate processes: Playwright's sync API (used by the lab and site tests) and the async tests (agent,
workers) cannot share one interpreter's main thread: each needs the event loop to itself.

Why two at a time: much of a test's time is spent waiting (the lab's deliberate delays, a browser loading a page,
a worker picking up a job), so one process leaves the machine idle for long stretches. Folders are isolated from
each other: every PostgreSQL test gets a database of its own, servers take free ports, and the end-to-end tests
use a Redis database number of their own. The longest folders start first so the two lanes end close together.

The fault tests that restart PostgreSQL and Redis would break everyone else's connections, so they run last,
alone, once every other folder has finished.

    python ops/testsuite.py [extra pytest options]
    CANITBUY_TEST_JOBS=1 python ops/testsuite.py    (one folder at a time)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")

ALONE = ("tests/e2e/test_faults_disruptive.py",)
"""Test files that restart the shared services: run after everything else, with nothing beside them."""

LONGEST_FIRST = ("tests/integration/agent", "tests/integration/web", "tests/e2e", "tests/integration/workers",
                 "tests/e2e/web", "tests/integration/lab", "tests/integration/store")
"""Folders by how long they took in CI, longest first (the rest follow in name order): started in this order,
two lanes end close together."""


@dataclass(frozen=True)
class Outcome:
    group: list[str]
    output: str
    returncode: int
    seconds: float


def groups() -> list[list[str]]:
    """Every test folder as one pytest invocation, the files in ALONE left out (see `alone`)."""
    leave_out = [f"--ignore={path}" for path in ALONE]
    found: list[list[str]] = [["tests/unit"]]
    for top in ("integration", "e2e"):
        folder = TESTS / top
        subfolders = sorted(p for p in folder.iterdir() if p.is_dir() and any(p.glob("test_*.py")))
        found += [[str(p.relative_to(ROOT))] for p in subfolders]
        if any(folder.glob("test_*.py")):
            ignore = [f"--ignore={p.relative_to(ROOT)}" for p in subfolders]
            found.append([str(folder.relative_to(ROOT)), *ignore, *leave_out])
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    return sorted(found, key=lambda g: (rank.get(g[0], len(rank)), g[0]))


def alone() -> list[list[str]]:
    return [[path] for path in ALONE if (ROOT / path).exists()]


def run_group(group: list[str], extra: list[str]) -> Outcome:
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pytest", *group, *extra], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    return Outcome(group, result.stdout, result.returncode, time.monotonic() - started)


def report(outcome: Outcome, totals: dict[str, int], failed_groups: list[str]) -> None:
    print(f"\n==> pytest {' '.join(outcome.group)}  ({outcome.seconds / 60:.1f} min)", flush=True)
    sys.stdout.write(outcome.output)
    sys.stdout.flush()
    last = [line for line in outcome.output.splitlines() if line.strip()][-1:] or [""]
    for count, word in SUMMARY.findall(last[0]):
        key = "errors" if word.startswith("error") else word
        totals[key] = totals.get(key, 0) + int(count)
    if outcome.returncode != 0:
        failed_groups.append(outcome.group[0])


def jobs() -> int:
    raw = os.environ.get("CANITBUY_TEST_JOBS", "2")
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise SystemExit(f"CANITBUY_TEST_JOBS must be a whole number of 1 or more, not {raw!r}")
    return int(raw)


def main(extra: list[str]) -> int:
    lanes = jobs()
    totals: dict[str, int] = {}
    failed_groups: list[str] = []
    started = time.monotonic()
    waiting = groups()
    planned = len(waiting) + len(alone())
    print(f"==> {planned} test groups, {lanes} at a time; the service-restarting fault tests last, alone",
          flush=True)
    with ThreadPoolExecutor(max_workers=lanes) as pool:
        running: set[Future[Outcome]] = set()
        while waiting or running:
            while waiting and len(running) < lanes:
                group = waiting.pop(0)
                print(f"==> started pytest {group[0]}", flush=True)
                running.add(pool.submit(run_group, group, extra))
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                report(future.result(), totals, failed_groups)
    for group in alone():
        print(f"==> started pytest {group[0]} (alone)", flush=True)
        report(run_group(group, extra), totals, failed_groups)
    minutes = (time.monotonic() - started) / 60
    print(f"\n==> {planned} test groups in {minutes:.1f} min")
    if failed_groups:
        print("failing groups: " + ", ".join(failed_groups))
    failures = totals.get("failed", 0) + totals.get("errors", 0)
    if failed_groups and failures == 0:
        failures = len(failed_groups)  # a group that broke before its summary (collection, a crash)
    print(f"total: {totals.get('passed', 0)} passed, {failures} failed, {totals.get('skipped', 0)} skipped")
    return 1 if failed_groups else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
