"""The CPU each kind of process on the machine spent during a phase, sampled from /proc.

On two cores the course is bound by CPU, so where its CPU goes (Chromium's browser, renderer and GPU processes,
Playwright's driver, ffmpeg, our own process) says more than its wall time: a renderer lives for one run and is
gone by the phase's end, so every process is read every `TICK` seconds while the phase runs, and each keeps the
kind it was first seen as (a process on its way out shows no command line).

    with ProcessCpu() as cpu:
        with cpu.phase("course"):
            ...
    print(cpu.report("course"))
"""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TICK = 0.1
_HZ = os.sysconf("SC_CLK_TCK")


def start_and_cpu(stat: str) -> tuple[str, float]:
    """A process's start time (in clock ticks since boot: with its pid, it names the process) and the CPU seconds
    it has spent so far (user + system), from its /proc/PID/stat."""
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19], (int(fields[11]) + int(fields[12])) / _HZ


def cpu_seconds(pid: int) -> float:
    """The CPU seconds process `pid` has spent so far."""
    return start_and_cpu(Path(f"/proc/{pid}/stat").read_text())[1]


def _kind(pid: str, comm: str) -> str:
    if "chrom" not in comm.lower():
        for name, kind in (("node", "node (Playwright's driver)"), ("python", "python (ours, the lab's threads)"),
                           ("ffmpeg", "ffmpeg")):
            if name in comm.lower():
                return kind
        return "other"
    try:
        # Chromium's child processes write their arguments over argv as one string: split on spaces too.
        args = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
    except OSError:
        return "chromium ?"
    if not args:
        return "chromium ?"
    kind = next((a[7:].decode() for a in args if a.startswith(b"--type=")), "browser")
    return f"chromium {kind}"


class ProcessCpu:
    """Samples every process's user + system time in a thread; `phase` marks a span to report on."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], tuple[str, float]] = {}
        """(pid, start time) -> (kind, CPU seconds so far)."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.phases: dict[str, tuple[float, dict[str, float]]] = {}
        """Each phase's wall seconds and CPU seconds by kind of process."""

    def __enter__(self) -> ProcessCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(TICK):
            self.sample()

    def sample(self) -> dict[tuple[str, str], tuple[str, float]]:
        with self._lock:
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    raw = Path(f"/proc/{pid}/stat").read_text()
                except OSError:
                    continue
                start, cpu = start_and_cpu(raw)
                key = (pid, start)
                known = self._seen.get(key)
                kind = known[0] if known and known[0] != "chromium ?" else _kind(pid, raw[raw.index("(") + 1:
                                                                                            raw.rindex(")")])
                self._seen[key] = (kind, cpu)
            return dict(self._seen)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        before, began = self.sample(), time.perf_counter()
        try:
            yield
        finally:
            after = self.sample()
            spent: collections.Counter[str] = collections.Counter()
            for key, (kind, cpu) in after.items():
                spent[kind] += cpu - before.get(key, (kind, 0.0))[1]
            self.phases[name] = (time.perf_counter() - began, dict(spent))

    def report(self, name: str) -> str:
        wall, spent = self.phases[name]
        parts = ", ".join(f"{kind} {cpu:.1f}" for kind, cpu in sorted(spent.items(), key=lambda kv: -kv[1])
                          if cpu >= 0.5)
        return f"{name} CPU {sum(spent.values()):.1f} s in {wall:.1f} s: {parts}"
