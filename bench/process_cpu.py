"""The CPU each kind of process under ours spent during a phase, sampled from /proc by a process of its own.

On two cores the course is bound by CPU, so where its CPU goes (Chromium's browser, renderer and GPU processes,
Playwright's driver, ffmpeg, our own process) says more than its wall time: a renderer lives for one run and is
gone by the phase's end, so every process is read every `TICK` seconds while the phase runs, and each keeps the
kind it was first seen as (a process on its way out shows no command line).

The sampler runs in a child process and counts only our process and its descendants. Until 2 December 2026 it
was a thread of ours reading every process on the machine through pathlib: a py-spy profile of one course found
it spending 25 s of CPU in 190 s (an eighth of a core), counted as ours, and holding our interpreter's lock
against the event loop that drives every run, while other sessions' processes on a shared machine were counted
as "other".

    with ProcessCpu() as cpu:
        with cpu.phase("course"):
            ...
    print(cpu.report("course"))
"""

from __future__ import annotations

import collections
import json
import os
import select
import subprocess
import sys
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


def _read(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096).decode(errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


class _Sampler:
    """The child's side: `root` and every process descended from it but the sampler, as "pid:start" -> (kind,
    CPU seconds so far)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.seen: dict[str, tuple[str, float]] = {}

    def sample(self) -> None:
        parents: dict[str, str] = {}
        stats: dict[str, str] = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            raw = _read(f"/proc/{pid}/stat")
            if raw is None:
                continue
            stats[pid] = raw
            parents[pid] = raw.rsplit(")", 1)[1].split(maxsplit=2)[1]
        itself = str(os.getpid())
        for pid, raw in stats.items():
            if pid == itself or not self._descends(pid, parents):
                continue
            start, cpu = start_and_cpu(raw)
            key = f"{pid}:{start}"
            known = self.seen.get(key)
            kind = known[0] if known and known[0] != "chromium ?" else _kind(pid, raw[raw.index("(") + 1:
                                                                                        raw.rindex(")")])
            self.seen[key] = (kind, cpu)

    def _descends(self, pid: str, parents: dict[str, str]) -> bool:
        while pid not in ("0", "1") and pid != self.root:
            pid = parents.get(pid, "0")
        return pid == self.root


def _serve(root: str) -> None:
    """The sampler process: samples every TICK; each line on stdin asks for what it has seen, as one JSON line."""
    sampler = _Sampler(root)
    while True:
        ready, _, _ = select.select([sys.stdin], [], [], TICK)
        sampler.sample()
        if ready:
            if not sys.stdin.readline():
                return
            sys.stdout.write(json.dumps(sampler.seen) + "\n")
            sys.stdout.flush()


class ProcessCpu:
    """Samples the user + system time of our process and its descendants in a child process; `phase` marks a
    span to report on."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[str] | None = None
        self.phases: dict[str, tuple[float, dict[str, float]]] = {}
        """Each phase's wall seconds and CPU seconds by kind of process."""

    def __enter__(self) -> ProcessCpu:
        self._child = subprocess.Popen([sys.executable, __file__, "--serve", str(os.getpid())], text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._child is not None:
            assert self._child.stdin is not None
            self._child.stdin.close()
            self._child.wait(timeout=10)

    def sample(self) -> dict[str, tuple[str, float]]:
        assert self._child is not None and self._child.stdin is not None and self._child.stdout is not None, \
            "use ProcessCpu as a context manager"
        self._child.stdin.write("sample\n")
        self._child.stdin.flush()
        seen: dict[str, list[str | float]] = json.loads(self._child.stdout.readline())
        return {key: (str(kind), float(cpu)) for key, (kind, cpu) in seen.items()}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        before, began = self.sample(), time.perf_counter()
        try:
            yield
        finally:
            after = self.sample()
            spent: collections.defaultdict[str, float] = collections.defaultdict(float)
            for key, (kind, cpu) in after.items():
                spent[kind] += cpu - before.get(key, (kind, 0.0))[1]
            self.phases[name] = (time.perf_counter() - began, dict(spent))

    def report(self, name: str) -> str:
        wall, spent = self.phases[name]
        parts = ", ".join(f"{kind} {cpu:.1f}" for kind, cpu in sorted(spent.items(), key=lambda kv: -kv[1])
                          if cpu >= 0.5)
        return f"{name} CPU {sum(spent.values()):.1f} s in {wall:.1f} s: {parts}"


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    _serve(sys.argv[2])
