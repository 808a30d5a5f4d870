"""Run the whole test suite as separate pytest processes, one a test folder, and add up the results.

Why separate processes: Playwright's sync API (used by the lab and site tests) and the async tests (agent,
workers) cannot share one interpreter's main thread: each needs the event loop to itself. Separate processes
also keep the disruptive fault tests (which restart PostgreSQL and Redis) away from everyone else's
connections, so they run last, alone.

    python ops/testsuite.py [extra pytest options]
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def groups() -> list[list[str]]:
    found: list[list[str]] = [["tests/unit"]]
    for top in ("integration", "e2e"):
        folder = TESTS / top
        subfolders = sorted(p for p in folder.iterdir() if p.is_dir() and any(p.glob("test_*.py")))
        found += [[str(p.relative_to(ROOT))] for p in subfolders]
        if any(folder.glob("test_*.py")):
            ignore = [f"--ignore={p.relative_to(ROOT)}" for p in subfolders]
            found.append([str(folder.relative_to(ROOT)), *ignore])
    return found


def main(extra: list[str]) -> int:
    totals: dict[str, int] = {}
    failed_groups: list[str] = []
    started = time.monotonic()
    planned = groups()
    for group in planned:
        print(f"\n==> pytest {' '.join(group)}", flush=True)
        result = subprocess.run([sys.executable, "-m", "pytest", *group, *extra], cwd=ROOT, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        sys.stdout.write(result.stdout)
        last = [line for line in result.stdout.splitlines() if line.strip()][-1:] or [""]
        for count, word in SUMMARY.findall(last[0]):
            key = "errors" if word.startswith("error") else word
            totals[key] = totals.get(key, 0) + int(count)
        if result.returncode != 0:
            failed_groups.append(group[0])
    minutes = (time.monotonic() - started) / 60
    print(f"\n==> {len(planned)} test groups in {minutes:.1f} min")
    if failed_groups:
        print("failing groups: " + ", ".join(failed_groups))
    failures = totals.get("failed", 0) + totals.get("errors", 0)
    if failed_groups and failures == 0:
        failures = len(failed_groups)  # a group that broke before its summary (collection, a crash)
    print(f"total: {totals.get('passed', 0)} passed, {failures} failed, {totals.get('skipped', 0)} skipped")
    return 1 if failed_groups else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
