"""The workers' own view of runs, folded from the notification log: which runs exist, which are open.

The log is the truth about what is still to do. After a Redis restart (queued jobs lost) or a crash, the
scheduler finds scheduled-but-unfinished runs here and enqueues them again; `week run` counts progress here.
The fold is incremental: it remembers the last position it read, and positions may have gaps, so it reads
"after the last seen".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from domain.record import Record
from domain.weeks import week_of


@dataclass
class RunState:
    run_id: str
    station: str
    model: str
    week: str
    kind: str
    attempt: int
    repeat: int
    requested_by: str
    org: str | None
    counts_by_start: bool = False
    status: str = "scheduled"
    passed: bool | None = None
    outcome: str | None = None
    cause: str | None = None
    steps: int = 0

    @property
    def is_over(self) -> bool:
        return self.status in ("finished", "cut_short")

    @property
    def cell(self) -> tuple[str, str, str, int]:
        """Week (the one it counts for), model, station, repeat: attempts of one cell replace each other."""
        return (self.week, self.model, self.station, self.repeat)


class RunLedger:
    def __init__(self, record: Record) -> None:
        self.record = record
        self.position = 0
        self.runs: dict[str, RunState] = {}

    def refresh(self) -> RunLedger:
        """Read the log from the last position seen (synchronous: call it from a worker thread)."""
        while True:
            page = self.record.read_log(after=self.position, limit=5000)
            if not page:
                return self
            for envelope in page:
                self._apply(envelope.name, envelope.originator_id, envelope.payload)
            self.position = page[-1].position

    def _apply(self, name: str, run_id: str, event: object) -> None:
        if name == "Run.Scheduled":
            e = event
            self.runs[run_id] = RunState(
                run_id, e.station, e.model, e.week, e.kind, e.attempt, e.repeat,  # type: ignore[attr-defined]
                e.requested_by, e.org, e.counts_by_start,  # type: ignore[attr-defined]
            )
            return
        state = self.runs.get(run_id)
        if state is None:
            return
        if name == "Run.Started":
            state.status = "running"
            if state.counts_by_start:  # a run counts for the week it started in, as the projections fold it
                state.week = week_of(event.timestamp)  # type: ignore[attr-defined]
        elif name == "Run.StepRecorded":
            state.steps += 1
        elif name == "Run.Finished":
            state.status, state.passed = "finished", event.verdict.passed  # type: ignore[attr-defined]
            state.outcome = event.verdict.outcome  # type: ignore[attr-defined]
        elif name == "Run.CutShort":
            state.status, state.cause = "cut_short", event.cause  # type: ignore[attr-defined]

    def get(self, run_id: str) -> RunState | None:
        return self.runs.get(run_id)

    def of(self, run_ids: Iterable[str]) -> list[RunState]:
        return [self.runs[r] for r in run_ids if r in self.runs]

    def open_runs(self) -> list[RunState]:
        """Runs an executor should still take: scheduled, of a kind a worker executes."""
        return [r for r in self.runs.values() if r.status == "scheduled" and r.kind in ("browser", "reader")]

    def running(self, week: str) -> list[RunState]:
        """Public runs that started in the week (count for it) and have not ended."""
        return [r for r in self.runs.values() if r.week == week and r.org is None and r.status == "running"]

    def newest_attempts(self, week: str) -> list[RunState]:
        """For each cell of the week (runs counting for it), its newest attempt."""
        newest: dict[tuple[str, str, str, int], RunState] = {}
        for run in self.runs.values():
            # ARC runs belong to their batch (`canitbuy arc run`): the week's repeats never take them over.
            if run.week == week and run.org is None and run.kind in ("browser", "reader"):
                held = newest.get(run.cell)
                if held is None or run.attempt > held.attempt:
                    newest[run.cell] = run
        return list(newest.values())
