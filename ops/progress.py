"""Live progress of a week's runs on a terminal: one updating line on a TTY, a plain line per change otherwise."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

from workers.ledger import RunState


@dataclass
class Tally:
    total: int = 0
    passed: int = 0
    failed: int = 0
    cut_short: int = 0

    @property
    def done(self) -> int:
        return self.passed + self.failed + self.cut_short

    @classmethod
    def of(cls, runs: Iterable[RunState], total: int) -> Tally:
        tally = cls(total=total)
        for run in runs:
            if run.status == "finished":
                if run.passed:
                    tally.passed += 1
                else:
                    tally.failed += 1
            elif run.status == "cut_short":
                tally.cut_short += 1
        return tally


@dataclass
class Progress:
    stream: TextIO
    tty: bool
    started: float = field(default_factory=time.monotonic)
    _last: str = ""
    _counts: tuple[int, ...] = ()

    def show(self, tally: Tally, note: str = "") -> None:
        line = self._line(tally) + (f"  {note}" if note else "")
        counts = (tally.total, tally.done, tally.passed, tally.failed, tally.cut_short, len(note))
        # A terminal line is redrawn as time passes; a log gets a line only when a count changes.
        if line == self._last or (not self.tty and counts == self._counts):
            return
        self._last, self._counts = line, counts
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.tty and self._last:
            self.stream.write("\n")
            self.stream.flush()

    def _line(self, tally: Tally) -> str:
        elapsed = time.monotonic() - self.started
        left = "?"
        if tally.done:
            left = _duration(elapsed / tally.done * (tally.total - tally.done))
        return (f"runs {tally.done}/{tally.total}  passed {tally.passed}  failed {tally.failed}  "
                f"cut short {tally.cut_short}  elapsed {_duration(elapsed)}  left {left}")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
