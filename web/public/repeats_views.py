"""The week's repeat runs (docs/schemas/repeats.json) as the ranking and Matrix pages show them: in words and
numbers, never colour alone. Shown only when some cell of the week has more than one repeat with a result."""

from __future__ import annotations

from fractions import Fraction

import msgspec

from domain.projections.repeat_runs import cell_pass_hat_k
from domain.projections.repeats import Repeats, RepeatsCell, RepeatsModel
from domain.projections.statistics import percent_text, wilson
from web.public.week_views import MatrixRow


class RepeatsRow(msgspec.Struct, frozen=True, kw_only=True):
    """One model's repeat runs in words."""

    model: str
    label: str
    runs: int
    passed: int
    share: str
    low: str
    high: str
    pass_hat_k: list[tuple[int, str]]
    band: str
    tied: bool


class PairRow(msgspec.Struct, frozen=True, kw_only=True):
    """One pair's paired test in words."""

    a: str
    b: str
    stations: int
    only_a: int
    only_b: int
    p_value: str
    verdict: str


def has_repeats(repeats: Repeats | None) -> bool:
    return repeats is not None and repeats.most_repeats > 1


def _percent(share: Fraction | float | None) -> str:
    """A share as a whole percentage, rounded half up from its exact value (statistics.percent_text, as the
    ranking table prints it): 5 of 8 is 63%, where round() of the document's 0.6250 gave 62, and a value is never
    rounded twice (0.12495 is 12%, though its four decimals 0.1250 would be 13%)."""
    return "–" if share is None else f"{percent_text(share, 0)}%"


def _pass_hat_k(model: RepeatsModel, k: int) -> Fraction:
    """pass^k exactly, from the counting cells' passes and runs as the document defines it (the mean over the
    counting stations with results of C(passed, k) / C(runs, k)); the document's value is its four decimals."""
    measured = [c for c in model.cells.values() if c.counts and c.runs]
    return sum((cell_pass_hat_k(c.passed, c.runs, k) for c in measured), Fraction(0)) / len(measured)


def _band(model: RepeatsModel, labels: dict[str, str]) -> str:
    band = model.band
    if model.excluded_text is not None:
        return f"excluded: {model.excluded_text}"
    if band is None:
        return "not ranked"
    places = f"place {band.best}" if band.best == band.worst else f"places {band.best}–{band.worst}"
    if model.tied_with:
        names = ", ".join(labels.get(m, m) for m in model.tied_with)
        return f"{places}; tied with {names} (the difference could be chance)"
    return places


def repeats_models(repeats: Repeats) -> list[RepeatsRow]:
    """One row a model: runs, share with its Wilson 95% interval, pass^k and the rank band, as text."""
    labels = {m.model: m.label for m in repeats.models}
    rows = []
    for m in repeats.models:
        interval = wilson(m.passed, m.runs)  # the document's bounds are these, to four decimals
        rows.append(RepeatsRow(
            model=m.model, label=m.label, runs=m.runs, passed=m.passed,
            share=_percent(Fraction(m.passed, m.runs) if m.runs else None),
            low=_percent(interval.low), high=_percent(interval.high),
            pass_hat_k=[(p.k, _percent(_pass_hat_k(m, p.k))) for p in m.pass_hat_k], band=_band(m, labels),
            tied=bool(m.tied_with),
        ))
    return rows


def repeats_pairs(repeats: Repeats) -> list[PairRow]:
    """Every pair's exact McNemar test, in words: could its difference be chance?"""
    labels = {m.model: m.label for m in repeats.models}
    return [
        PairRow(
            a=labels.get(p.a, p.a), b=labels.get(p.b, p.b), stations=p.stations, only_a=p.only_a,
            only_b=p.only_b, p_value=p.p_value, verdict="could be chance (tied)" if p.tied else "unlikely to be chance",
        )
        for p in repeats.pairs
    ]


def cell_repeat_text(cell: RepeatsCell | None) -> str:
    """"2 of 3 passed, 67% agree" for a cell with more than one repeat; empty otherwise."""
    if not cell or cell.runs < 2:
        return ""
    agree = Fraction(max(cell.passed, cell.runs - cell.passed), cell.runs)  # the document's agreement, exactly
    return f"{cell.passed} of {cell.runs} passed, {_percent(agree)} agree"


def with_repeat_cells(rows: list[MatrixRow], codes: list[str], repeats: Repeats) -> list[MatrixRow]:
    """The Matrix rows (cells in `codes` order) with each cell's passes out of k and agreement added."""
    by_model = {m.model: m.cells for m in repeats.models}
    return [
        msgspec.structs.replace(row, cells=[
            msgspec.structs.replace(cell, repeats=cell_repeat_text(by_model.get(row.model, {}).get(code)))
            for cell, code in zip(row.cells, codes, strict=True)
        ])
        for row in rows
    ]
