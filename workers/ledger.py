"""The workers' own view of runs: the projections' fold of the notification log (`LogState`), kept in memory.

The log is the truth about what is still to do. After a Redis restart (queued jobs lost) or a crash, the
scheduler finds scheduled-but-unfinished runs here and enqueues them again; `week run` counts progress here.
It folds the log exactly as the read models do (one fold, so a run counts for the same week in both), step
payloads skimmed. The fold is incremental: it remembers the last position it read, and positions may have gaps,
so it reads "after the last seen".
"""

from __future__ import annotations

from collections.abc import Iterable

from domain.eventlog.record import Record
from domain.projections.facts import RunFact
from domain.projections.fold import SKIMMED, LogState

RunState = RunFact
"""A run as the workers see it: the projections' fact of it."""


class RunLedger:
    def __init__(self, record: Record) -> None:
        self.record = record
        self.state = LogState()

    @property
    def position(self) -> int:
        return self.state.position

    @property
    def runs(self) -> dict[str, RunFact]:
        return self.state.runs

    def refresh(self) -> RunLedger:
        """Read the log from the last position seen (synchronous: call it from a worker thread)."""
        while True:
            page = self.record.read_log(after=self.state.position, limit=5000, skim=SKIMMED)
            if not page:
                return self
            self.state.fold(page)
            self.state.dirty_runs.clear()  # the read models' bookkeeping: nothing here writes them
            self.state.dirty_corrections.clear()
            self.state.dirty_organisations.clear()

    def get(self, run_id: str) -> RunFact | None:
        return self.runs.get(run_id)

    def of(self, run_ids: Iterable[str]) -> list[RunFact]:
        return [self.runs[r] for r in run_ids if r in self.runs]

    def open_runs(self) -> list[RunFact]:
        """Runs an executor should still take: scheduled, of a kind a worker executes."""
        return [r for r in self.runs.values() if r.status == "scheduled" and r.kind in ("browser", "reader")]

    def running(self, week: str) -> list[RunFact]:
        """Public runs that started in the week (count for it) and have not ended."""
        return [r for r in self.runs.values() if r.week == week and r.org is None and r.status == "running"]

    def newest_attempts(self, week: str) -> list[RunFact]:
        """For each cell of the week (runs counting for it), its newest attempt."""
        newest: dict[tuple[str, str, str, int], RunFact] = {}
        for run in self.runs.values():
            # ARC runs belong to their batch (`canitbuy arc run`): the week's repeats never take them over.
            if run.week == week and run.org is None and run.kind in ("browser", "reader"):
                held = newest.get(run.cell)
                if held is None or run.attempt > held.attempt:
                    newest[run.cell] = run
        return list(newest.values())
