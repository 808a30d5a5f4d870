"""Where the event loop's time went in a py-spy profile of a course (`py-spy record --idle --threads --format raw`).

    py-spy record --idle --threads --format raw -r 50 -o course.txt -- python bench/bench_course.py --models 2
    python bench/profile_summary.py course.txt

Every run's browser work shares the one event loop thread: what it spends there delays them all. Worker
threads (the record's saves, the blob writes after issue 17) are summed apart: they cost wall-clock only to the
run that waits for them.
"""

from __future__ import annotations

import sys
from collections import Counter

SAMPLE_HZ = 50
WORKERS = ("AnyIO worker thread", "asyncio_", "group-commit")
IDLE = ("EpollSelector.select", "runners.py:118", "Condition.wait", "futures/thread.py:81", "_do_waitpid",
        "GroupCommitter._loop")  # the last frame of a thread waiting for work
PARTS = {
    "Playwright protocol validation": "validator_primitives",
    "Playwright protocol JSON decode": "json/decoder",
    "blob writes (fsync)": "FileBlobStore.put",
    "the record's saves": "Application.save",
    "run loads (event replay)": "Record.get_run",
    "leases": "SqlLeaseStore",
    "session calls (observe, act, probe)": "PlaywrightSession.",
    "the episode's own code": "Episode.",
}


def main(path: str) -> None:
    loop: Counter[str] = Counter()
    workers: Counter[str] = Counter()
    with open(path, encoding="utf-8") as lines:
        stacks = [line.rstrip().rpartition(" ") for line in lines]
    for stack, _, count in stacks:
        frames = stack.split(";")
        if "MainThread" in frames[0]:
            where = loop
        elif any(name in frames[0] for name in WORKERS):
            where = workers
        else:
            continue  # the lab's and the key directory's servers: the floor has them too
        if any(idle in frames[-1] for idle in IDLE):
            where["idle"] += int(count)
            continue
        where["busy"] += int(count)
        for part, marker in PARTS.items():
            if marker in stack:
                where[part] += int(count)
    for name, counts in (("event loop thread", loop), ("worker threads (summed)", workers)):
        print(f"{name}: busy {counts['busy'] / SAMPLE_HZ:.1f} s, idle {counts['idle'] / SAMPLE_HZ:.1f} s")
        for part in PARTS:
            if counts[part]:
                print(f"    {part:<38} {counts[part] / SAMPLE_HZ:6.1f} s")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: profile_summary.py PROFILE.txt", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
