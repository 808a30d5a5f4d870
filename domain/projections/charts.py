"""The numbers behind the site's charts, computed from the weeks' public documents (CC BY 4.0).

Each chart is drawn from one of these Structs and its table prints the same values, so what a reader sees, what
a screen reader reads and what /api/charts/*.json serves are one set of numbers; a percentage is printed from the
counts the JSON holds (passed and of), rounded half up to a tenth, not from the share's four decimals. Nothing here
is part of a publication: the charts are views of the ranking and the Matrix, never a source of a result.

A station's pass rate is the Matrix's (documents format 5 on: control-first, the results of the models that passed
S01 that week and no correction excluded; S01's own, every model's), and the site's Matrices are always in the
current format. An unranked model's share is kept in the weeks chart's numbers, marked `ranked: false`, and never
drawn: it is not a score.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from domain.projections.documents import Matrix, Ranking
from domain.projections.statistics import percent_text, wilson

LICENSE: Final = "CC BY 4.0"
CHART_FORMAT: Final = "canitbuy-chart/1"


def _four(value: float) -> float:
    """Four decimals, for the JSON. The pages print a share from its exact value instead (`Percents`), since a
    share rounded twice can print a tenth off: 14/17 is 0.8235 here, 82.3% printed, where 82.352...% is 82.4%."""
    return round(value, 4)


class Percents(msgspec.Struct, kw_only=True, frozen=True):
    """A share and its Wilson 95% interval as the pages print them: percentages to one decimal, rounded half up from
    the exact values (statistics.percent_text), as the ranking table rounds its whole percentages."""

    share: str
    low: str
    high: str


def percents(passed: int, of: int) -> Percents:
    interval = wilson(passed, of)
    return Percents(share=_percent(passed, of), low=percent_text(interval.low), high=percent_text(interval.high))


def _percent(passed: int, of: int) -> str:
    """passed / of as a printed percentage; 0.0 without any, as the share is 0.0 then."""
    return percent_text(Fraction(passed, of) if of else Fraction(0))


class Chart(msgspec.Struct, kw_only=True, frozen=True):
    """What every chart's data starts with."""

    format: str = CHART_FORMAT
    """Chart data format and version."""
    license: str = LICENSE
    """The data licence."""
    chart: str
    """Which chart: ranking, weeks, stops, cost or station."""


class IntervalRow(msgspec.Struct, kw_only=True, frozen=True):
    """One model's share passed this week with its Wilson 95% interval."""

    model: str
    """Model name."""
    label: str
    """Its name as shown to readers."""
    place: int | None
    """Competition place; null when unranked."""
    passed: int
    """Obstacle stations passed."""
    of: int
    """Obstacle stations that count."""
    share: float
    """passed / of, four decimals."""
    low: float
    """Lower bound of the Wilson 95% interval, four decimals."""
    high: float
    """Upper bound of the Wilson 95% interval, four decimals."""

    def percents(self) -> Percents:
        return percents(self.passed, self.of)


def interval_row(model: str, label: str, place: int | None, passed: int, of: int) -> IntervalRow:
    interval = wilson(passed, of)
    return IntervalRow(model=model, label=label, place=place, passed=passed, of=of,
                       share=_four(passed / of) if of else 0.0, low=_four(interval.low), high=_four(interval.high))


class RankingChart(Chart, kw_only=True, frozen=True):
    """The ranking as intervals (a forest plot): ranked models by place, so overlapping intervals show a tie."""

    week: str
    course_version: str
    rows: list[IntervalRow]


def ranking_chart(ranking: Ranking) -> RankingChart:
    rows = [interval_row(e.model, e.label, e.place, e.passed, e.of) for e in ranking.entries if e.ranked]
    return RankingChart(chart="ranking", week=ranking.week, course_version=ranking.course_version, rows=rows)


class WeekPoint(msgspec.Struct, kw_only=True, frozen=True):
    """A model's week: share passed with its interval, whether it was ranked. An unranked week's share is no score
    (S01 not passed, a station without a result, or excluded): the chart does not draw it."""

    week: str
    course_version: str
    ranked: bool
    passed: int
    of: int
    share: float
    low: float
    high: float

    def percents(self) -> Percents:
        return percents(self.passed, self.of)


class ModelSeries(msgspec.Struct, kw_only=True, frozen=True):
    model: str
    label: str
    points: list[WeekPoint]
    """Oldest week first; weeks without the model are left out."""


class CourseChange(msgspec.Struct, kw_only=True, frozen=True):
    week: str
    """The first week run on the new version."""
    course_version: str


class WeeksChart(Chart, kw_only=True, frozen=True):
    """Each model over the weeks, with the weeks in which the course version changed."""

    weeks: list[str]
    """Oldest first."""
    series: list[ModelSeries]
    """By model name."""
    course_changes: list[CourseChange]


def weeks_chart(rankings: Sequence[Ranking]) -> WeeksChart:
    """From the weeks' rankings in any order."""
    ordered = sorted(rankings, key=lambda r: r.week)
    points: dict[str, list[WeekPoint]] = {}
    labels: dict[str, str] = {}
    for ranking in ordered:
        for e in ranking.entries:
            row = interval_row(e.model, e.label, e.place, e.passed, e.of)
            labels[e.model] = e.label
            points.setdefault(e.model, []).append(WeekPoint(
                week=ranking.week, course_version=ranking.course_version, ranked=e.ranked, passed=e.passed,
                of=e.of, share=row.share, low=row.low, high=row.high))
    changes = [CourseChange(week=now.week, course_version=now.course_version)
               for before, now in zip(ordered, ordered[1:], strict=False)
               if now.course_version != before.course_version]
    return WeeksChart(chart="weeks", weeks=[r.week for r in ordered],
                      series=[ModelSeries(model=m, label=labels[m], points=points[m]) for m in sorted(points)],
                      course_changes=changes)


class StationCount(msgspec.Struct, kw_only=True, frozen=True):
    """How many of the line-up passed one station."""

    code: str
    name: str
    stage: str
    passed: int
    """Counted models that passed it."""
    results: int
    """Counted models with a result (a cut-short or missing run is not one): at an obstacle station those that
    passed S01 this week, at S01 every model; a model excluded from the week by a correction counts nowhere."""
    excluded: bool
    not_counted: int = 0
    """Models with a result here that the station's rate leaves out (the Matrix station's not_counted)."""


class StageCount(msgspec.Struct, kw_only=True, frozen=True):
    """A stage's results summed over its stations."""

    stage: str
    name: str
    passed: int
    results: int
    share: float
    """passed / results, four decimals; 0 without results."""

    def percent(self) -> str:
        return _percent(self.passed, self.results)


class StageWeek(msgspec.Struct, kw_only=True, frozen=True):
    week: str
    stages: list[StageCount]


class StopsChart(Chart, kw_only=True, frozen=True):
    """Where agents stop: per station (in the course's stage order) how many of the line-up passed, this week,
    and per stage over the weeks."""

    week: str
    course_version: str
    models: int
    """Models in the week's Matrix."""
    stations: list[StationCount]
    stages: list[StageCount]
    over_weeks: list[StageWeek]
    """Oldest week first."""
    counted: int = 0
    """Models whose results the obstacle stations count: those that passed S01 this week and no correction
    excluded (S01's passed)."""


def _control_passed(matrix: Matrix) -> int:
    return next((s.passed for s in matrix.stations if s.stage == "control"), 0)


def _stages(matrix: Matrix) -> list[StageCount]:
    counts: dict[str, list[int]] = {}
    for s in matrix.stations:
        if not s.excluded:
            total = counts.setdefault(s.stage, [0, 0])
            total[0] += s.passed
            total[1] += s.results
    names = matrix.stage_names()
    return [StageCount(stage=key, name=names.get(key, key), passed=p, results=r,
                       share=_four(p / r) if r else 0.0) for key, (p, r) in counts.items()]


def stops_chart(matrix: Matrix, earlier: Sequence[Matrix] = ()) -> StopsChart:
    """The week's Matrix, its stations in the stage order it carries, and every week's for the history."""
    history = sorted([*earlier, matrix], key=lambda m: m.week)
    return StopsChart(
        chart="stops", week=matrix.week, course_version=matrix.course_version, models=len(matrix.models),
        stations=[StationCount(code=s.code, name=s.name, stage=s.stage, passed=s.passed, results=s.results,
                               excluded=s.excluded, not_counted=len(s.not_counted)) for s in matrix.stations],
        stages=_stages(matrix),
        over_weeks=[StageWeek(week=m.week, stages=_stages(m)) for m in history],
        counted=_control_passed(matrix),
    )


class CostRow(msgspec.Struct, kw_only=True, frozen=True):
    """A model's cost per run against its share passed."""

    model: str
    label: str
    ranked: bool
    runs: int
    """Runs of the week that ended (finished or cut short)."""
    cost_usd: float
    """What the week's runs cost, from the recorded tokens and the model's prices."""
    cost_per_run_usd: float
    """cost_usd / runs, six decimals."""
    share: float
    """Obstacle stations passed / counted, four decimals."""
    passed: int = 0
    """Obstacle stations passed (the ranking's)."""
    of: int = 0
    """Obstacle stations that count (the ranking's)."""

    def percent(self) -> str:
        return _percent(self.passed, self.of)


class CostChart(Chart, kw_only=True, frozen=True):
    week: str
    rows: list[CostRow]
    """Models with ended runs, by name."""
    checks_usd: float | UnsetType = UNSET
    """What the week's model checks cost (weekly and flagship models), besides the runs: in the week's spend, in no
    row's cost per run. Absent when the spend counts no check that week (spend.json's checks_usd)."""


class RunCost(msgspec.Struct, kw_only=True, frozen=True):
    """A model's week of spend, as the spend document gives it."""

    model: str
    runs_ended: int
    actual_usd: float


def cost_chart(ranking: Ranking, spend: Sequence[RunCost], checks_usd: float | UnsetType = UNSET) -> CostChart:
    by_model = {s.model: s for s in spend}
    rows = []
    for e in sorted(ranking.entries, key=lambda e: e.model):
        cost = by_model.get(e.model)
        if cost is None or cost.runs_ended == 0:
            continue
        rows.append(CostRow(model=e.model, label=e.label, ranked=e.ranked, runs=cost.runs_ended,
                            cost_usd=round(cost.actual_usd, 6),
                            cost_per_run_usd=round(cost.actual_usd / cost.runs_ended, 6),
                            share=_four(e.passed / e.of) if e.of else 0.0, passed=e.passed, of=e.of))
    return CostChart(chart="cost", week=ranking.week, rows=rows, checks_usd=checks_usd)


class StationWeek(msgspec.Struct, kw_only=True, frozen=True):
    """One station in one week: its pass rate, and what each model's counted run did."""

    week: str
    passed: int
    """Counted models that passed it (see StationCount)."""
    results: int
    """Counted models with a result."""
    rate: float | None
    """passed / results, four decimals; null without results."""
    cells: dict[str, str]
    """Model to its Matrix cell status (passed, stopped, verification_page, broke_brief, cut_short, not_run), every
    model's, counted or not."""
    not_counted: list[str] = []
    """Models with a result here that the rate leaves out: S01 not passed that week, or excluded from it."""


class StationChart(Chart, kw_only=True, frozen=True):
    """A station's pass rate over the weeks, per model."""

    station: str
    name: str
    models: list[str]
    """Every model seen on the station, by name."""
    weeks: list[StationWeek]
    """Oldest first; weeks whose course has no such station are left out."""


def station_chart(code: str, name: str, matrices: Sequence[Matrix]) -> StationChart:
    weeks: list[StationWeek] = []
    models: set[str] = set()
    for matrix in sorted(matrices, key=lambda m: m.week):
        station = next((s for s in matrix.stations if s.code == code), None)
        if station is None:
            continue
        cells: dict[str, str] = {m.model: m.cells[code].status for m in matrix.models if code in m.cells}
        models.update(cells)
        weeks.append(StationWeek(week=matrix.week, passed=station.passed, results=station.results,
                                 rate=_four(station.passed / station.results) if station.results else None,
                                 cells=cells, not_counted=list(station.not_counted)))
    return StationChart(chart="station", station=code, name=name, models=sorted(models), weeks=weeks)
