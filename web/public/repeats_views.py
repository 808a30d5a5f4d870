"""The week's repeat runs (docs/schemas/repeats.json) as the ranking and Matrix pages show them: in words and
numbers, never colour alone. Shown only when some cell of the week has more than one repeat with a result."""

from __future__ import annotations

import msgspec

from domain.projections.repeats import Repeats, RepeatsCell, RepeatsModel
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


def _percent(decimal: str | None) -> str:
    return "–" if decimal is None else f"{round(float(decimal) * 100)}%"


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
    return [
        RepeatsRow(
            model=m.model, label=m.label, runs=m.runs, passed=m.passed, share=_percent(m.share),
            low=_percent(m.interval.low), high=_percent(m.interval.high),
            pass_hat_k=[(p.k, _percent(p.value)) for p in m.pass_hat_k], band=_band(m, labels),
            tied=bool(m.tied_with),
        )
        for m in repeats.models
    ]


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
    return f"{cell.passed} of {cell.runs} passed, {_percent(cell.agreement)} agree"


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
