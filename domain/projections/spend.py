"""The week's spend on models: what the runs that count for a week have cost, and what the rest will cost.

Read from the log (Run.Scheduled, Run.Started, Run.StepRecorded, Run.Finished, Run.CutShort) through the one fold
of a run (domain/projections/fold.py), incrementally: the workers ask it before starting a model run (the weekly
cap), the site publishes it as the week's spend JSON.
A run counts for the week in which it started, as everywhere else; a run not started yet counts for the week it
was scheduled for. The week's model checks (LineUp.ModelsChecked, Monday 06:00 and 14:00 UTC: one call a model)
count for the week they check, apart from the runs, in the spend and its caps; checks recorded before they counted
(`in_spend` false) are left out, so the spend of those weeks reads as it did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import msgspec
from msgspec import UNSET, UnsetType

from domain.eventlog.schema import Envelope
from domain.projections.facts import RunFact
from domain.projections.fold import STEP, fold_run, scheduled

Estimate = Callable[[str], float]
"""US dollars one run of a model is expected to cost (0 for the built-in agents)."""


class ModelSpend(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    flagship: bool = False
    """A model of the flagship line-up: counted against the flagship cap, not the weekly one."""
    runs_ended: int
    runs_to_start: int
    """Scheduled and not started yet."""
    actual_usd: float
    projected_usd: float
    """Actual, plus each run still to start at this model's average so far (or the line-up's estimate)."""


class WeekSpend(msgspec.Struct, frozen=True, kw_only=True):
    """The body of /api/weeks/{week}/spend.json."""

    week: str
    cap_usd: float | None
    """The weekly spending cap (CANITBUY_WEEKLY_CAP_USD); null when none is set."""
    actual_usd: float
    projected_usd: float
    cap_reached: bool
    """True when the weekly models' actual spend has reached the cap: no further weekly model run starts."""
    flagship_cap_usd: float | None = None
    """The flagship line-up's own cap (CANITBUY_FLAGSHIP_CAP_USD); null when none is set."""
    flagship_actual_usd: float = 0.0
    flagship_projected_usd: float = 0.0
    flagship_cap_reached: bool = False
    models: list[ModelSpend] = []
    """Every model with runs in the week; actual_usd and projected_usd above are the weekly models' sums, with the
    week's model checks."""
    checks_usd: float | UnsetType = UNSET
    """What the week's model checks of weekly models cost (one call a model at Monday 06:00 UTC, and at 14:00 for
    those the first could not reach): counted in actual_usd, projected_usd and the cap, and in no model's runs.
    Absent in a week with no check counted (checks recorded before 7 December 2026 were not: such a week's document
    is as it was)."""
    flagship_checks_usd: float | UnsetType = UNSET
    """The same for the flagship models, counted in the flagship figures and cap; absent when none was counted."""


RUN_EVENTS = frozenset({"Run.Started", "Run.StepRecorded", "Run.Finished", "Run.CutShort"})
CHECKED = "LineUp.ModelsChecked"


@dataclass
class SpendFold:
    """The runs of the log as the one fold makes them (`scheduled`, `fold_run`: their week, whether they ended),
    and what each has cost: the sum of its steps' `cost_usd`, which only the spend reads. A browser run records a
    step for each call to its model; a reader run of a model records its one call as its one step (reader runs
    before 7 December 2026 recorded none, and cost nothing here). A call whose reply our token limit cut is a step
    too, the last of a run cut short (since 7 December 2026; before, such a call was in no step). The week's
    model checks are kept apart from the runs: week to (model, cost) of each call they made."""

    runs: dict[str, RunFact]
    costs: dict[str, float]
    checks: dict[str, list[tuple[str, float]]]
    position: int = 0

    @classmethod
    def empty(cls) -> SpendFold:
        return cls(runs={}, costs={}, checks={})

    def apply(self, envelopes: Iterable[Envelope]) -> None:
        for e in envelopes:
            self.position = e.position
            if e.name == CHECKED:
                if e.payload.in_spend:  # checks recorded before they counted stay out (their weeks read as they did)
                    self.checks.setdefault(e.payload.week, []).extend(
                        (r.model, float(r.cost_usd)) for r in e.payload.results)
                continue
            if e.name == "Run.Scheduled":
                if e.payload.org is None:  # private tests are an organisation's, never the week's
                    self.runs[e.originator_id] = scheduled(e.originator_id, e.payload, e.position)
                    self.costs[e.originator_id] = 0.0
                continue
            run = self.runs.get(e.originator_id)
            if run is None or e.name not in RUN_EVENTS:
                continue
            fold_run(run, e.name, e.payload, e.position)
            if e.name == STEP:
                self.costs[e.originator_id] += float(e.payload.step.cost_usd)

    def _in(self, week: str) -> list[tuple[RunFact, float]]:
        return [(r, self.costs[r.run_id]) for r in self.runs.values() if r.week == week]

    def _checks(self, week: str, counted: Callable[[str], bool]) -> float | UnsetType:
        """What the week's model checks of the counted models cost; UNSET when the week has no check counted."""
        calls = [cost for model, cost in self.checks.get(week, []) if counted(model)]
        return round(sum(calls), 6) if calls else UNSET

    def actual(self, week: str, counted: Callable[[str], bool] = lambda model: True) -> float:
        """What the week's runs and model checks of the counted models have cost so far."""
        checks = self._checks(week, counted)
        runs = sum(cost for r, cost in self._in(week) if counted(r.model))
        return round(runs + (0.0 if checks is UNSET else checks), 6)

    def week(self, week: str, *, cap_usd: float | None, estimate: Estimate,
             flagship: Callable[[str], bool] = lambda model: False, flagship_cap_usd: float | None = None,
             ) -> WeekSpend:
        models: list[ModelSpend] = []
        in_week = self._in(week)
        for model in sorted({r.model for r, _ in in_week}):
            runs = [(r, cost) for r, cost in in_week if r.model == model]
            ended = [cost for r, cost in runs if r.is_over]
            actual = sum(cost for _, cost in runs)
            each = sum(ended) / len(ended) if ended else estimate(model)
            to_start = sum(1 for r, _ in runs if r.status == "scheduled")
            models.append(ModelSpend(model=model, flagship=flagship(model), runs_ended=len(ended),
                                     runs_to_start=to_start, actual_usd=round(actual, 6),
                                     projected_usd=round(actual + to_start * each, 6)))
        weekly = [m for m in models if not m.flagship]
        flagships = [m for m in models if m.flagship]
        checks = self._checks(week, lambda model: not flagship(model))
        flagship_checks = self._checks(week, flagship)
        checked = 0.0 if checks is UNSET else checks
        flagship_checked = 0.0 if flagship_checks is UNSET else flagship_checks
        actual = round(sum(m.actual_usd for m in weekly) + checked, 6)
        flagship_actual = round(sum(m.actual_usd for m in flagships) + flagship_checked, 6)
        return WeekSpend(week=week, cap_usd=cap_usd, actual_usd=actual,
                         projected_usd=round(sum(m.projected_usd for m in weekly) + checked, 6),
                         cap_reached=cap_usd is not None and actual >= cap_usd,
                         flagship_cap_usd=flagship_cap_usd, flagship_actual_usd=flagship_actual,
                         flagship_projected_usd=round(sum(m.projected_usd for m in flagships) + flagship_checked, 6),
                         flagship_cap_reached=flagship_cap_usd is not None and flagship_actual >= flagship_cap_usd,
                         models=models, checks_usd=checks, flagship_checks_usd=flagship_checks)
