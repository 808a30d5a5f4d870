"""The week's repeat-run document (canonical JSON, CC BY 4.0), beside the ranking and the Matrix.

It is computed from the same week facts as they are, at the same log position, and documented field by field in
docs/schemas/repeats.json. It does not change the ranking or the Matrix (their bytes and hashes stay as they
were) and it is not part of a publication: Week.Published carries the hashes of those two only.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Literal

import msgspec

from domain.courses.course import CourseSpec
from domain.projections.canonical import canonical_struct_bytes, decimal_text
from domain.projections.documents import (
    DOCUMENTS_FORMAT,
    LICENSE,
    Document,
    ExcludedStation,
    citation,
    counting_rule,
    course_for_week,
)
from domain.projections.facts import WeekFacts
from domain.projections.repeat_runs import ModelRepeats, PairTest, RepeatCell, WeekRepeats, week_repeats
from domain.projections.statistics import Z95, agreement

REPEATS_FORMAT: Literal["canitbuy-repeats/2"] = "canitbuy-repeats/2"
"""Version 2 (with documents format 4): the newest result is the run that started last, and the cut-off applies to
the start; version 1 took the run that finished last and applied the cut-off to the end. The document is always
computed as corrected in the current documents format, so version 1 is not written again."""


Decimal4 = Annotated[str, msgspec.Meta(pattern=r"^\d+\.\d{4}$")]
Count = Annotated[int, msgspec.Meta(ge=0)]


class Interval(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Wilson score interval (95%, z in `z`) of the share; [0, 1] without runs. Bounds rounded half up to four
    decimals."""

    low: Decimal4
    """Lower bound."""
    high: Decimal4
    """Upper bound."""


class PassHatK(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """pass^k for one k."""

    k: Annotated[int, msgspec.Meta(ge=1)]
    """Number of repeats drawn."""
    value: Decimal4
    """pass^k."""


class Band(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Rank band: the best and worst place the model could hold once differences that could be chance are
    ignored."""

    best: Annotated[int, msgspec.Meta(ge=1)]
    """Best place."""
    worst: Annotated[int, msgspec.Meta(ge=1)]
    """Worst place."""


class RepeatsCell(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """One model's repeats at one station."""

    counts: bool
    """True when the station counts towards the share this week (an obstacle station not excluded); the control
    and excluded stations are shown but not counted."""
    runs: Count
    """Repeats with a result: per repeat index (Run.Scheduled.repeat) the newest finished run (the one that started
    last) that started after the results cut-off, corrections applied. Cut-short, private and voided runs are never
    results."""
    passed: Count
    """How many of those repeats passed (out of `runs`)."""
    outcomes: list[bool]
    """Each repeat's outcome (true = passed), in repeat-index order."""
    repeats: list[int]
    """The repeat index of each outcome."""
    run_ids: list[str]
    """The run behind each outcome."""
    agreement: Decimal4 | None
    """Share of the repeats that agree with their majority outcome (1.0000 when all agree; 0.5000 for an even
    split), four decimals, rounded half up; null without results."""
    outcome: bool | None
    """The station outcome the paired tests compare: the majority of the repeats; a tie (as many passes as fails)
    goes to the newest result (the one that started last), the run the official ranking counts. Null without
    results."""


class RepeatsModel(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """One model's repeat runs of the week."""

    model: str
    """Model or built-in agent name."""
    label: str
    """Its name as shown to readers."""
    ranked: bool
    """Ranked in the official ranking (newest run of the week), copied from it."""
    place: Annotated[int, msgspec.Meta(ge=1)] | None
    """The official place, copied from the ranking; null when unranked."""
    excluded_text: str | None
    """Public text of the correction that excluded the model's week; null when not excluded. Excluded models take
    part in no pair test and no band."""
    runs: Count
    """All its repeats with a result at the stations that count this week."""
    passed: Count
    """How many of them passed."""
    share: Decimal4 | None
    """passed / runs, four decimals, rounded half up; null without runs."""
    interval: Interval
    """Wilson score interval (95%, z in `z`) of the share; [0, 1] without runs. Bounds rounded half up to four
    decimals."""
    pass_hat_k: list[PassHatK]
    """pass^k for k = 1 up to the fewest repeats at any counting station where the model has results: the mean
    over those stations of C(passed, k) / C(runs, k), the chance that k repeats drawn from a station all pass.
    pass^1 is the mean per-station pass rate; a higher k rewards consistency."""
    band: Band | None
    """Rank band among the officially ranked models: the places the model could hold once differences that could
    be chance are ignored. Null unless ranked."""
    tied_with: list[str]
    """Ranked models whose difference from this one could be chance (McNemar p >= alpha); empty unless ranked."""
    cells: dict[str, RepeatsCell]
    """Per station code of the course, its repeats."""


class Pair(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """The exact paired McNemar test of two models."""

    a: str
    """One model (the names are in alphabetical order)."""
    b: str
    """The other model."""
    stations: Count
    """Counting stations where both have a station outcome: the pairs of the test."""
    only_a: Count
    """Stations a passed and b did not."""
    only_b: Count
    """Stations b passed and a did not."""
    p_value: Annotated[str, msgspec.Meta(pattern=r"^\d+\.\d{6}$")]
    """Exact two-sided McNemar p-value (binomial test on the discordant stations), six decimals, rounded half up;
    1.000000 without discordant stations."""
    tied: bool
    """True when p >= alpha: the difference could be chance."""


class Repeats(Document, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Beside the official ranking (which keeps the method's rule: the newest run of the week, the one that
    started last, counts), every
    repeat run of the week: per model and station the passes out of k and how often the repeats agree, pass^k, a
    Wilson 95% interval of each model's share over all its runs at the counting stations, exact paired McNemar
    tests between models and rank bands. Private tests never appear; cut-short runs are never results;
    corrections apply (a voided run leaves the repeats). CC BY 4.0."""

    format: Literal["canitbuy-repeats/2"]
    """Document format and version (2: the newest run is the one that started last)."""
    position: Annotated[int, msgspec.Meta(ge=0)]
    """The event-log position the document was computed at: the same as the week's ranking and Matrix. This
    document is not part of a publication (Week.Published carries the ranking and Matrix hashes only); it is
    always as corrected."""
    control: str
    """The control station."""
    stations: list[str]
    """Obstacle stations that count this week."""
    excluded_stations: list[ExcludedStation]
    """Stations left out for everyone this week."""
    confidence: Literal["0.95"]
    """Confidence level of the intervals."""
    alpha: Literal["0.0500"]
    """Significance level of the paired tests: p >= alpha is marked as tied."""
    z: str
    """The normal quantile used by the Wilson intervals (1.959964)."""
    most_repeats: Count
    """The most repeats with a result in any cell this week (k)."""
    models: list[RepeatsModel]
    """Every model with a public run this week, in the official ranking's order."""
    pairs: list[Pair]
    """Every pair of models not excluded, alphabetical."""


def _decimal(value: float, places: int = 4) -> str:
    return decimal_text(Fraction(value), places)


def _cell(cell: RepeatCell | None, counts: bool) -> RepeatsCell:
    results = cell.results if cell is not None else []
    outcomes = [bool(r.verdict and r.verdict.passed) for r in results]
    return RepeatsCell(
        counts=counts, runs=len(results), passed=sum(outcomes), outcomes=outcomes,
        repeats=[r.repeat for r in results], run_ids=[r.run_id for r in results],
        agreement=_decimal(agreement(outcomes)) if outcomes else None,
        outcome=cell.outcome if cell is not None else None,
    )


def _model(m: ModelRepeats, repeats: WeekRepeats, labels: dict[str, str], course: CourseSpec) -> RepeatsModel:
    entry = next(e for e in repeats.score.entries if e.model == m.model)
    counting = set(repeats.score.stations)
    return RepeatsModel(
        model=m.model, label=labels.get(m.model, m.model), ranked=entry.ranked, place=entry.place,
        excluded_text=entry.excluded_text, runs=m.runs, passed=m.passed,
        share=decimal_text(Fraction(m.passed, m.runs)) if m.runs else None,
        interval=Interval(low=_decimal(m.interval.low), high=_decimal(m.interval.high)),
        pass_hat_k=[PassHatK(k=k, value=decimal_text(v)) for k, v in enumerate(m.pass_hat_k, start=1)],
        band=Band(best=m.band[0], worst=m.band[1]) if m.band else None,
        tied_with=m.tied_with,
        cells={code: _cell(repeats.cells.get((m.model, code)), code in counting) for code in course.codes},
    )


def _pair(p: PairTest) -> Pair:
    return Pair(a=p.a, b=p.b, stations=p.stations, only_a=p.test.only_a, only_b=p.test.only_b,
                p_value=_decimal(p.test.p_value, 6), tied=p.tied)


def repeats_document(facts: WeekFacts, course: CourseSpec, repeats: WeekRepeats) -> Repeats:
    score = repeats.score
    return Repeats(
        format=REPEATS_FORMAT, license=LICENSE, week=facts.week, course_version=course.version,
        position=facts.position, citation=citation(facts), confidence="0.95", alpha="0.0500",
        z=_decimal(Z95, 6), control=course.control.code, stations=score.stations,
        excluded_stations=[ExcludedStation(station=s, text=t) for s, t in sorted(score.excluded_stations.items())],
        most_repeats=max((len(c.results) for c in repeats.cells.values()), default=0),
        models=[_model(m, repeats, facts.labels, course) for m in repeats.models],
        pairs=[_pair(p) for p in repeats.pairs],
    )


def repeats_bytes(facts: WeekFacts) -> bytes:
    """The week's repeat-run document as canonical JSON, counted as the current documents format counts."""
    course = course_for_week(facts.releases, facts.week)
    repeats = week_repeats(facts.week, facts.runs, facts.corrections, course, counting_rule(DOCUMENTS_FORMAT))
    return canonical_struct_bytes(repeats_document(facts, course, repeats))
