"""The attempts of a cell: every run of one model at one station and repeat that counts for the same week.

The method counts the newest run of the week (scoring.py), so a later attempt (a staff re-run, the Monday-afternoon
repeat of a cut-short run) replaces an earlier one. The pages say so: a cell whose shown run is not the only
attempt is marked, and a run's page names the others. This module only reads what scoring decides: the same
filters (`is_public_run_of`: never a private test), the same corrections (a voided run is no result, `corrected`)
and the same "newest" (`newest_result_by`). It changes no document.

Attempts are numbered in the order they started (a run never started is no attempt yet); `Run.Scheduled.attempt`
is not used for it, since a staff re-run is scheduled as attempt 1 again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from domain.courses.course import CourseSpec
from domain.projections.facts import CorrectionFact, RunFact
from domain.projections.scoring import (
    COUNT_BY_START,
    CountBy,
    began_at,
    corrected,
    is_public_run_of,
    is_result,
    newest_result_by,
)

Why = Literal["counts", "cut_short", "voided", "replaced", "before_cutoff", "running"]
"""Why an attempt counts or not: counts (the newest result); cut_short (never a result); voided (a correction
dropped it); replaced (a newer attempt's result counts instead); before_cutoff (it started before the results
cut-off); running (not ended yet)."""

CellKey = tuple[str, str, str, int, str, str]
"""(week, model, station, repeat, kind, course_version)"""


class Attempt(msgspec.Struct, frozen=True, kw_only=True):
    run_id: str
    number: int
    """1 for the attempt that started first in the week."""
    status: str
    """running, finished or cut_short."""
    why: Why
    passed: bool | None = None
    outcome: str | None = None
    cut_short_cause: str | None = None

    @property
    def counts(self) -> bool:
        return self.why == "counts"


class CellAttempts(msgspec.Struct, frozen=True, kw_only=True):
    week: str
    model: str
    station: str
    repeat: int
    attempts: list[Attempt]
    """In the order they started."""
    repeated: bool = False
    """The week ran this model at this station more than once on purpose (a repeat index above 0): the attempts
    are those of one repeat, whose newest result the repeat-run figures count; the Matrix shows the newest of all."""

    @property
    def counted(self) -> Attempt | None:
        return next((a for a in self.attempts if a.counts), None)

    def of(self, run_id: str) -> Attempt | None:
        return next((a for a in self.attempts if a.run_id == run_id), None)

    def others(self, run_id: str) -> list[Attempt]:
        return [a for a in self.attempts if a.run_id != run_id]


def cell_key(run: RunFact) -> CellKey:
    return (run.week, run.model, run.station, run.repeat, run.kind, run.course_version)


def _order(run: RunFact) -> tuple[object, int, str]:
    return (began_at(run), run.end_position if run.end_position is not None else 1 << 62, run.run_id)


def _attempts_of(runs: list[RunFact], corrections: Sequence[CorrectionFact], count_by: CountBy,
                 key: CellKey, repeated: bool) -> CellAttempts:
    runs = sorted(runs, key=_order)
    kept = {r.run_id for r in corrected(runs, corrections)}
    counted = newest_result_by(corrected(runs, corrections), lambda r: 0, count_by).get(0)
    attempts = []
    for number, run in enumerate(runs, start=1):
        v = run.verdict
        why: Why
        if counted is not None and run.run_id == counted.run_id:
            why = "counts"
        elif not run.is_over:
            why = "running"
        elif run.status == "cut_short":
            why = "cut_short"
        elif run.run_id not in kept:
            why = "voided"
        elif not is_result(run, count_by):
            why = "before_cutoff"
        else:  # a result, and not the newest one
            why = "replaced"
        attempts.append(Attempt(run_id=run.run_id, number=number, status=run.status, why=why,
                                passed=v.passed if v else None, outcome=v.outcome if v else None,
                                cut_short_cause=run.cut_short_cause))
    week, model, station, repeat, _, _ = key
    return CellAttempts(week=week, model=model, station=station, repeat=repeat, attempts=attempts,
                        repeated=repeated)


def week_attempts(runs: Iterable[RunFact], corrections: Sequence[CorrectionFact], week: str, course: CourseSpec,
                  count_by: CountBy = COUNT_BY_START) -> dict[str, CellAttempts]:
    """Every started run of `week` that may count (scoring.is_public_run_of: never a private test, nor a run of
    another course or of the kind that does not score its station), by id, to the attempts of its cell."""
    cells: dict[CellKey, list[RunFact]] = {}
    for run in runs:
        if is_public_run_of(run, week, course) and run.status != "scheduled":
            cells.setdefault(cell_key(run), []).append(run)
    week_corrections = [c for c in corrections if c.week == week]
    repeated = {(w, m, s, k, v) for (w, m, s, r, k, v) in cells if r > 0}
    found: dict[str, CellAttempts] = {}
    for key, group in cells.items():
        w, m, s, _, k, v = key
        attempts = _attempts_of(group, week_corrections, count_by, key, (w, m, s, k, v) in repeated)
        for attempt in attempts.attempts:
            found[attempt.run_id] = attempts
    return found
