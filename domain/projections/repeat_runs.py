"""Repeat runs: k runs per model and station a week, and what they say beside the official ranking.

The official ranking keeps the method's rule (the newest run of the week counts); these rules read every repeat:
- A cell (model, station) holds, for each repeat index (Run.Scheduled.repeat, 0..k-1), the newest *result* of
  that index: the same filters, corrections and order as the ranking (public runs of the week's course, started
  after the cut-off, newest by scoring.newest_order; cut-short runs are never results, a voided run leaves its
  cell, set_outcome changes its verdict).
  An attempt that replaced a cut-short one fills its repeat once.
- The *station outcome* of a model, which the paired tests compare: the majority of the cell's repeats; a tie
  (as many passes as fails) goes to the newest result, the run the official ranking counts.
- A model's *share* is its passes over its runs at the stations that count this week (the obstacle stations not
  excluded, as in the ranking), with a Wilson 95% interval.
- *pass^k* for k = 1 .. the fewest repeats at any of those stations where it has results: the mean over them of
  C(passes, k) / C(runs, k), the chance that k repeats drawn from a cell all pass.
- *Pairs*: an exact McNemar test between any two models not excluded, on the counting stations where both have
  an outcome. p >= ALPHA means the difference could be chance: the two are marked as tied.
- *Rank bands*: for the models the official ranking ranks (they have an outcome at every counting station), the
  best and worst place each could hold once differences that could be chance are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from itertools import combinations

import msgspec

from domain.courses.course import CourseSpec
from domain.projections.facts import CorrectionFact, RunFact
from domain.projections.scoring import (
    COUNT_BY_START,
    CountBy,
    WeekScore,
    corrected,
    is_public_run_of,
    newest,
    newest_result_by,
    score_week,
)
from domain.projections.statistics import Interval, McNemar, mcnemar_exact, pass_hat_k, rank_bands, wilson

ALPHA = 0.05
"""Differences with a McNemar p-value at or above this could be chance."""

Key = tuple[str, str]
"""(model, station)"""


class RepeatCell(msgspec.Struct, frozen=True, kw_only=True):
    """The results of one model at one station in a week, one per repeat index, by index."""

    model: str
    station: str
    results: list[RunFact]
    count_by: CountBy = COUNT_BY_START
    """How "newest" was decided (scoring.newest_order), for the tie of `outcome`."""

    @property
    def outcomes(self) -> list[bool]:
        return [bool(r.verdict and r.verdict.passed) for r in self.results]

    @property
    def passed(self) -> int:
        return sum(self.outcomes)

    @property
    def outcome(self) -> bool | None:
        """Majority of the repeats; a tie goes to the newest result. None without results."""
        return station_outcome(self.results, self.count_by)


class ModelRepeats(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    runs: int
    """Results at the stations that count this week, every repeat included."""
    passed: int
    interval: Interval
    """Wilson 95% interval of passed / runs ([0, 1] without runs)."""
    pass_hat_k: list[Fraction]
    """pass^1, pass^2, ... (index k - 1)."""
    band: tuple[int, int] | None
    """Best and worst place once chance differences are ignored; None unless ranked."""
    tied_with: list[str]
    """Other models of the bands whose difference from this one could be chance."""


class PairTest(msgspec.Struct, frozen=True, kw_only=True):
    a: str
    b: str
    stations: int
    """Counting stations where both have an outcome (the pairs of the test)."""
    test: McNemar
    tied: bool


class WeekRepeats(msgspec.Struct, frozen=True, kw_only=True):
    score: WeekScore
    """The official score of the week, for its stations, exclusions and places."""
    cells: dict[Key, RepeatCell]
    models: list[ModelRepeats]
    """In the official ranking's order."""
    pairs: list[PairTest]


def station_outcome(results: Sequence[RunFact], count_by: CountBy = COUNT_BY_START) -> bool | None:
    """The majority outcome of a cell's results; a tie goes to the newest result. None without results."""
    if not results:
        return None
    passes = sum(1 for r in results if r.verdict and r.verdict.passed)
    if 2 * passes != len(results):
        return 2 * passes > len(results)
    last = newest(results, count_by)
    return bool(last and last.verdict and last.verdict.passed)


def repeat_cells(runs: Iterable[RunFact], count_by: CountBy = COUNT_BY_START) -> dict[Key, RepeatCell]:
    """The newest result of each repeat index per (model, station); runs already filtered and corrected."""
    by_index = newest_result_by(runs, lambda r: (r.model, r.station, r.repeat), count_by)
    grouped: dict[Key, list[RunFact]] = {}
    for (model, station, _), found in sorted(by_index.items(), key=lambda item: item[0]):
        grouped.setdefault((model, station), []).append(found)
    return {key: RepeatCell(model=key[0], station=key[1], results=results, count_by=count_by)
            for key, results in grouped.items()}


def cell_pass_hat_k(passed: int, runs: int, k: int) -> Fraction:
    """statistics.pass_hat_k as an exact fraction, C(passed, k) / C(runs, k), so the document's decimals never
    depend on float rounding."""
    pass_hat_k(passed, runs, k)  # the same checks of its arguments
    return Fraction(math.comb(passed, k), math.comb(runs, k))


def model_pass_hat_k(cells: Sequence[RepeatCell]) -> list[Fraction]:
    """pass^k for k = 1 .. the fewest results in any of the cells with results: the mean over them."""
    measured = [c for c in cells if c.results]
    if not measured:
        return []
    most = min(len(c.results) for c in measured)
    return [
        sum((cell_pass_hat_k(c.passed, len(c.results), k) for c in measured), Fraction(0)) / len(measured)
        for k in range(1, most + 1)
    ]


def week_repeats(
    week: str, runs: Iterable[RunFact], corrections: Sequence[CorrectionFact], course: CourseSpec,
    count_by: CountBy = COUNT_BY_START,
) -> WeekRepeats:
    """Every repeat of the week's public results, with the intervals and tests described above."""
    runs = list(runs)
    score = score_week(week, runs, corrections, course, count_by)
    week_corrections = [c for c in corrections if c.week == week]
    public = [r for r in runs if is_public_run_of(r, week, course)]
    cells = repeat_cells(corrected(public, week_corrections), score.count_by)
    excluded_models = {e.model for e in score.entries if e.excluded_text is not None}
    outcomes = {
        model: {s: cells[(model, s)].outcome for s in score.stations if (model, s) in cells}
        for model in score.models
    }
    ranked = [e.model for e in score.entries if e.ranked]
    bands = rank_bands([(m, [bool(outcomes[m][s]) for s in score.stations]) for m in ranked], alpha=ALPHA)
    pairs = [
        _pair(a, b, outcomes[a], outcomes[b])
        for a, b in combinations(sorted(m for m in score.models if m not in excluded_models), 2)
    ]
    tied = {m: sorted({p.b if p.a == m else p.a for p in pairs if p.tied and m in (p.a, p.b)}) for m in ranked}
    models = [
        _model(e.model, [cells[(e.model, s)] for s in score.stations if (e.model, s) in cells],
               bands.get(e.model), [t for t in tied.get(e.model, []) if t in bands])
        for e in score.entries
    ]
    return WeekRepeats(score=score, cells=cells, models=models, pairs=pairs)


def _pair(a: str, b: str, of_a: dict[str, bool | None], of_b: dict[str, bool | None]) -> PairTest:
    both = sorted(s for s in of_a if s in of_b)
    test = mcnemar_exact([bool(of_a[s]) for s in both], [bool(of_b[s]) for s in both])
    return PairTest(a=a, b=b, stations=len(both), test=test, tied=test.p_value >= ALPHA)


def _model(
    model: str, cells: list[RepeatCell], band: tuple[int, int] | None, tied_with: list[str]
) -> ModelRepeats:
    runs = sum(len(c.results) for c in cells)
    passed = sum(c.passed for c in cells)
    return ModelRepeats(
        model=model, runs=runs, passed=passed, interval=wilson(passed, runs), pass_hat_k=model_pass_hat_k(cells),
        band=band, tied_with=tied_with,
    )
