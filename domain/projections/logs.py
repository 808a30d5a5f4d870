"""Documents across weeks: the corrections log and the index of run recordings (a station's pass rates over the
weeks are its chart's, web/public/charts.py).

Shapes are documented in docs/schemas/corrections.json and docs/schemas/runs.json.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

import msgspec

from domain.projections.canonical import canonical_bytes, canonical_struct_bytes
from domain.projections.documents import LICENSE
from domain.projections.facts import CorrectionFact, RunFact

CORRECTIONS_FORMAT = "canitbuy-corrections/1"
RUNS_FORMAT = "canitbuy-runs/1"


class TargetState(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """A correction's target before or after it."""

    counts: bool
    """Whether it counts in the week's documents."""
    passed: bool | None
    """For runs: whether it passed."""
    outcome: str | None
    """For runs: the judge's outcome."""


class Withdrawal(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """The withdrawal of a correction."""

    at: datetime
    """When it was withdrawn."""
    by: str
    """Who withdrew it."""
    reason: str
    """Why, for the record."""
    position: int
    """Log position of Correction.Withdrawn."""


class CorrectionEntry(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """One correction as issued, with what it changed and its withdrawal."""

    id: str
    """Correction id."""
    target: Literal["run", "model_week", "station_week"]
    """What it corrects: one run, a model's week or a station's week."""
    change: Literal["void", "set_outcome", "exclude", "note"]
    """What it does to the target."""
    week: str
    """Week it applies to."""
    run_id: str | None
    """Run."""
    model: str | None
    """Model."""
    station: str | None
    """Station."""
    before: TargetState | None
    """The target as recorded (for runs: the judge's verdict)."""
    after: TargetState | None
    """The target as the correction makes it."""
    reason: str
    """Why, for the record."""
    text: str
    """What readers are told."""
    by: str
    """Who issued it."""
    issued_at: datetime
    """When."""
    position: int
    """Log position of Correction.Issued."""
    withdrawn: Withdrawal | None
    """The withdrawal, when there was one."""


class CorrectionsLog(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """The corrections log."""

    format: str
    """canitbuy-corrections/1"""
    license: Literal["CC BY 4.0"]
    """The data licence."""
    corrections: list[CorrectionEntry]
    """Every public correction, oldest first."""


def _state(counts: bool, run: RunFact | None = None, passed: bool | None = None, outcome: str | None = None
           ) -> TargetState:
    if run is not None and run.verdict is not None:
        passed, outcome = run.verdict.passed, run.verdict.outcome
    return TargetState(counts=counts, passed=passed, outcome=outcome)


def before_after(c: CorrectionFact, run: RunFact | None) -> tuple[TargetState | None, TargetState | None]:
    """What the target was as recorded, and what the correction makes it; None for a note."""
    if c.change == "note":
        return None, None
    if c.change == "void":
        return _state(True, run), _state(False)
    if c.change == "set_outcome":
        return _state(True, run), _state(True, passed=c.passed, outcome=c.outcome)
    return _state(True), _state(False)  # exclude a model's or a station's week


def correction_entry(c: CorrectionFact, run: RunFact | None) -> CorrectionEntry:
    before, after = before_after(c, run)
    withdrawn = (
        Withdrawal(at=c.withdrawn_at, by=c.withdrawn_by, reason=c.withdrawn_reason,  # type: ignore[arg-type]
                   position=c.withdrawn_position)  # type: ignore[arg-type]
        if c.withdrawn else None
    )
    assert c.week is not None
    return CorrectionEntry(
        id=c.correction_id, target=c.target, change=c.change, week=c.week, run_id=c.run_id,  # type: ignore[arg-type]
        model=c.model, station=c.station, before=before, after=after, reason=c.reason,
        text=c.public_text, by=c.by, issued_at=c.issued_at, position=c.position, withdrawn=withdrawn,
    )


def corrections_document(corrections: Iterable[CorrectionFact], runs: Mapping[str, RunFact]) -> CorrectionsLog:
    """Every public correction, oldest first, withdrawn ones included and marked."""
    return CorrectionsLog(format=CORRECTIONS_FORMAT, license=LICENSE, corrections=[
        correction_entry(c, runs.get(c.run_id) if c.run_id else None)
        for c in sorted(corrections, key=lambda c: c.position) if c.week is not None
    ])


def corrections_log(corrections: Iterable[CorrectionFact], runs: Mapping[str, RunFact]) -> bytes:
    return canonical_struct_bytes(corrections_document(corrections, runs))


def run_entry(run: RunFact) -> dict[str, Any]:
    v = run.verdict
    return {
        "run_id": run.run_id, "station": run.station, "model": run.model, "week": run.week, "kind": run.kind,
        "course_version": run.course_version, "attempt": run.attempt, "repeat": run.repeat,
        "status": run.status, "passed": v.passed if v else None, "outcome": v.outcome if v else None,
        "cut_short_cause": run.cut_short_cause, "steps": run.steps, "milliseconds": run.milliseconds,
        "scheduled_at": run.scheduled_at, "started_at": run.started_at, "ended_at": run.ended_at,
    }


def shown(run: RunFact) -> bool:
    """Public runs, and private tests their organisation consented in writing to make public."""
    return run.org is None or run.consented_at is not None


def index_entry(run: RunFact) -> dict[str, Any]:
    entry = run_entry(run)
    if run.org is not None:  # only consented private tests reach here; public entries keep their shape
        entry["private_test"] = {"org": run.org, "consented_at": run.consented_at, "counts": False}
    return entry


def runs_index(runs: Iterable[RunFact]) -> bytes:
    """The public runs, by week, model, station, repeat, attempt. A private test appears only once its
    organisation consented, marked `private_test` (it never counts); without consent it never appears."""
    public = sorted(
        (r for r in runs if shown(r)),
        key=lambda r: (r.week, r.model, r.station, r.repeat, r.attempt, r.scheduled_at, r.run_id),
    )
    return canonical_bytes({"format": RUNS_FORMAT, "license": LICENSE, "runs": [index_entry(r) for r in public]})
