"""Corrections: an error found is corrected by a new event that says what changed and why.

A correction never edits or deletes an event; it is applied by the projections (as corrected), and the week's
first publication stays as it was published.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Literal, get_args
from uuid import UUID, uuid4

from eventsourcing.domain import Aggregate

from domain.agent.verdicts import Outcome

TargetKind = Literal["run", "model_week", "station_week"]
Change = Literal["void", "set_outcome", "exclude", "note"]

_ALLOWED: dict[str, set[str]] = {
    "run": {"void", "set_outcome", "note"},
    "model_week": {"exclude", "note"},
    "station_week": {"exclude", "note"},
}


class CorrectionError(ValueError):
    """A correction that does not make sense; the message says why."""


class Correction(Aggregate):
    class Issued(Aggregate.Created):
        """Staff issued a correction."""

        target: str
        """run, model_week or station_week."""
        change: str
        """void (the run is not a result), set_outcome, exclude (from the week), or note (text only)."""
        reason: str
        """Why, for the record."""
        public_text: str
        """What the corrections log says to readers."""
        by: str
        """The staff member who issued it."""
        run_id: str | None = None
        model: str | None = None
        station: str | None = None
        week: str | None = None
        passed: bool | None = None
        """For set_outcome: whether the run now counts as passed."""
        outcome: str | None = None
        """For set_outcome: the outcome it now has."""

    class Withdrawn(Aggregate.Event):
        """The correction was withdrawn; the record is as if it had not been issued, and says so."""

        reason: str
        by: str

        def apply(self, aggregate: Correction) -> None:
            aggregate.withdrawn = True

    def __init__(
        self, *, target: str, change: str, reason: str, public_text: str, by: str,
        run_id: str | None = None, model: str | None = None, station: str | None = None,
        week: str | None = None, passed: bool | None = None, outcome: str | None = None,
    ) -> None:
        self.target, self.change, self.reason, self.public_text, self.by = target, change, reason, public_text, by
        self.run_id, self.model, self.station, self.week = run_id, model, station, week
        self.passed, self.outcome = passed, outcome
        self.withdrawn = False

    @classmethod
    def issue(
        cls, *, target: TargetKind, change: Change, reason: str, public_text: str, by: str, at: datetime,
        run_id: UUID | None = None, model: str | None = None, station: str | None = None,
        week: str | None = None, passed: bool | None = None, outcome: str | None = None,
    ) -> Correction:
        _check(target, change, run_id, model, station, week, passed, outcome, reason, public_text)
        return cls._create(
            cls.Issued, id=uuid4(), timestamp=at, target=target, change=change, reason=reason.strip(),
            public_text=public_text.strip(), by=by, run_id=str(run_id) if run_id else None, model=model,
            station=station, week=week, passed=passed, outcome=outcome,
        )

    def withdraw(self, *, reason: str, by: str, at: datetime) -> None:
        if self.withdrawn:
            raise CorrectionError("this correction was already withdrawn")
        if not reason.strip():
            raise CorrectionError("say why the correction is withdrawn")
        self.trigger_event(self.Withdrawn, timestamp=at, reason=reason.strip(), by=by)


def _check(
    target: str, change: str, run_id: UUID | None, model: str | None, station: str | None,
    week: str | None, passed: bool | None, outcome: str | None, reason: str, public_text: str,
) -> None:
    if target not in _ALLOWED:
        raise CorrectionError(f"unknown target {target!r}: run, model_week or station_week")
    if change not in _ALLOWED[target]:
        raise CorrectionError(f"a {target} correction can {', '.join(sorted(_ALLOWED[target]))}, not {change}")
    if not reason.strip() or not public_text.strip():
        raise CorrectionError("a correction needs a reason and a public text")
    if target == "run" and run_id is None:
        raise CorrectionError("a run correction names the run")
    if target != "run" and week is None:
        raise CorrectionError(f"a {target} correction names the week")
    if target == "model_week" and not model:
        raise CorrectionError("a model_week correction names the model")
    if target == "station_week" and not station:
        raise CorrectionError("a station_week correction names the station")
    if change == "set_outcome" and (passed is None or not outcome):
        raise CorrectionError("set_outcome says whether the run passed and which outcome it has")
    if change == "set_outcome" and outcome not in get_args(Outcome):  # new corrections only: events replay as recorded
        raise CorrectionError(f"outcome must be one of {', '.join(get_args(Outcome))}")
    if change == "set_outcome" and passed != (outcome == "passed"):
        raise CorrectionError("passed and outcome disagree")


def check_model_ran(model: str, week: str, models_with_runs: Collection[str]) -> None:
    """A correction of a model's week names a model with a public run that counts for that week (the week it
    started in; one not started yet, the week it was scheduled for): a corrections log naming models that never
    ran that week would mislead its readers. New corrections only: recorded ones replay as they are."""
    if model not in models_with_runs:
        raise CorrectionError(
            f"model {model} has no run in {week}: a model's week is corrected only for a week it ran in"
        )


def check_station_ran(station: str, week: str, stations_with_runs: Collection[str]) -> None:
    """A correction of a station's week names a station with a public run that counts for that week, as
    `check_model_ran` counts them: a station the course does not have never has one, and a corrections log leaving
    out or noting a station nobody ran that week would mislead its readers. New corrections only."""
    if station not in stations_with_runs:
        raise CorrectionError(
            f"station {station} has no run in {week}: a station's week is corrected only for a week it was run in"
        )


def check_run_counts(run_id: UUID, org: str | None) -> None:
    """A correction of a run names a public run: a private test counts for no week, so a correction of it would be
    in no week's documents and no public log (the fold gives it no week), said to nobody."""
    if org is not None:
        raise CorrectionError(f"run {run_id} is a private test: it counts for no week, so it takes no correction")


def check_outcome_settable(run_id: UUID, status: str) -> None:
    """An outcome is set only on a finished run: a run cut short is not a result (no verdict to correct; it is
    repeated or left missing), and one not finished has none yet. New corrections only."""
    if status == "cut_short":
        raise CorrectionError(
            f"run {run_id} was cut short, so it is not a result and has no outcome to set: void it or note it"
        )
    if status != "finished":
        raise CorrectionError(f"run {run_id} has not finished, so it has no outcome to set yet")


def check_not_the_control(station: str, control: str) -> None:
    """The control store is never left out of a week: the ranking asks every model to pass it, so leaving it out
    would change who is ranked while the pages said it did not count. New corrections only."""
    if station == control:
        raise CorrectionError(
            f"station {station} is the control store and is never left out of a week: "
            "correct the runs on it (void or set their outcome) instead"
        )
