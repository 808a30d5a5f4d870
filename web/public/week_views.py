"""From a week's public documents (ranking and Matrix JSON) to what the pages print.

The documents are the source: the pages never compute a result the JSON does not hold, except the Wilson
interval around each share, which is a pure function of passed and of, and the percentages printed, which are
rounded half up from passed / of and the interval's exact bounds (statistics.percent_text, as the charts print
them) rather than from the share's four decimals.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import msgspec

from adapters.models.lineup import BASELINES
from domain.projections.documents import Matrix, MatrixCell, MatrixStation, Ranking, RankingEntry
from domain.projections.statistics import percent_text, wilson
from web.public.attempts_views import AttemptsMark

REASONS = {
    "no_control_pass": "did not reach the checkout in the control store S01",
    "no_control_result": "no result in the control store S01",
    "stations_missing": "has no result from",
    "excluded": "excluded by a correction",
}

NO_RESULT = {
    # Why a station has no result: a cut-short run is not a result, and not the model's failure.
    "our_error": "cut short by our error",
    "model_connection": "cut short: the model could not be reached",
    "not_run": "not run",
}

CELL_TEXT = {
    # status: (icon, css class, words). The icon is decoration; the words carry the meaning.
    "passed": ("✓", "pass", "Passed"),
    "stopped": ("✗", "stop", "Stopped"),
    "verification_page": ("⊘", "stop", "Verification page"),
    "broke_brief": ("⚠", "stop", "Broke the brief"),
    "cut_short": ("↻", "note", "Cut short, not a result"),
    "not_run": ("–", "none", "Not run"),
}

OUTCOME_WORDS = {
    "stopped": "stopped", "step_limit": "ran out of steps", "time_limit": "ran out of time",
    "wrong_answer": "wrong answer", "verification_page": "verification page", "broke_brief": "broke the brief",
    "passed": "passed",
}


class RankedRow(msgspec.Struct, frozen=True, kw_only=True):
    """A ranked model's line: the entry, its interval and whether its place is shared."""

    model: str
    label: str
    place: int | None
    passed: int
    of: int
    accepted_all_cookies: int | None
    shared: bool
    percent: int
    low: int
    high: int
    builtin: bool = False
    """A built-in reference agent (baseline-*), not an AI model: the pages say so beside its name."""


class UnrankedRow(msgspec.Struct, frozen=True, kw_only=True):
    """An unranked model with why, in words."""

    model: str
    label: str
    passed: int
    of: int
    why: list[str]
    builtin: bool = False


class CellView(msgspec.Struct, frozen=True, kw_only=True):
    """A Matrix cell in words: the icon is decoration, the words carry the meaning."""

    run_id: str | None
    icon: str
    css: str
    words: str
    detail: str
    remark: str
    corrected: bool
    repeats: str = ""
    """"2 of 3 passed, 67% agree" when the cell has more than one repeat."""
    short: str = ""
    """What the compact Matrix prints beside the symbol: the step (and the stage, when not the column's) where the
    run stopped, the first broken clause of the brief, or whose failure cut the run short."""
    attempts: AttemptsMark | None = None
    """Set when the cell's run is not its only attempt of the week (a re-run): the mark, linking the others."""


class MatrixRow(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    label: str
    cells: list[CellView]
    """In the order of the Matrix's stations (the course's stage order)."""
    builtin: bool = False


def is_builtin(model: str) -> bool:
    """One of our built-in agents (docs/agents.md): rules, not an AI model. The week's documents name it like a
    model, and carry no field saying so (one would change the bytes of weeks already published)."""
    return model in BASELINES


class StageGroup(msgspec.Struct, frozen=True, kw_only=True):
    key: str
    name: str
    stations: list[MatrixStation]


def ranking_rows(ranking: Ranking) -> tuple[list[RankedRow], list[UnrankedRow]]:
    """(ranked rows, unranked rows) with the interval and the reasons in words."""
    places = Counter(e.place for e in ranking.entries if e.ranked)
    ranked, unranked = [], []
    for e in ranking.entries:
        if e.ranked:
            interval = wilson(e.passed, e.of)
            ranked.append(RankedRow(
                model=e.model, label=e.label, place=e.place, passed=e.passed, of=e.of,
                accepted_all_cookies=e.accepted_all_cookies, shared=places[e.place] > 1,
                percent=int(percent_text(Fraction(e.passed, e.of) if e.of else Fraction(0), 0)),
                low=int(percent_text(interval.low, 0)), high=int(percent_text(interval.high, 0)),
                builtin=is_builtin(e.model),
            ))
        else:
            unranked.append(UnrankedRow(model=e.model, label=e.label, passed=e.passed, of=e.of,
                                        why=[_reason(r, e) for r in e.reasons], builtin=is_builtin(e.model)))
    return ranked, unranked


def _reason(key: str, entry: RankingEntry) -> str:
    why = entry.no_result  # empty in documents made before it was added

    def named(code: str | None) -> str:
        text = NO_RESULT.get(why.get(code, "")) if code else None
        return f"{(code or '').upper()} ({text})" if text else (code or "").upper()

    if key == "stations_missing":
        return f"{REASONS[key]} {', '.join(named(s) for s in entry.missing)}"
    if key == "no_control_result":
        control = next((code for code in why if code not in entry.missing), None)
        return f"no result in {named(control)}" if control else REASONS[key]
    if key == "excluded" and entry.excluded_text:
        return f"{REASONS[key]}: {entry.excluded_text}"
    return REASONS.get(key, key)


def stage_groups(matrix: Matrix) -> list[StageGroup]:
    """The Matrix's stages that have stations, each with its columns, in the order the document carries: the
    Matrix's grouped header."""
    by_code = {s.code: s for s in matrix.stations}
    return [StageGroup(key=g.key, name=g.name, stations=[by_code[code] for code in g.stations if code in by_code])
            for g in matrix.stages if g.stations]


def cell_view(cell: MatrixCell, station_stage: str, names: dict[str, str]) -> CellView:
    """The cell's words. The column's stage is in the header; a stop at another stage names its own (`names`: the
    Matrix's stage names by key)."""
    icon, css, words = CELL_TEXT.get(cell.status, ("?", "none", cell.status))
    detail = ""
    if cell.status == "stopped":
        where = names.get(cell.stage, cell.stage) if cell.stage and cell.stage != station_stage else ""
        outcome = OUTCOME_WORDS.get(cell.outcome or "", "")
        outcome = "" if outcome == "stopped" else outcome
        detail = ", ".join(p for p in (where, f"step {cell.step}" if cell.step else "", outcome) if p)
    elif cell.status == "broke_brief" and cell.broke:
        detail = ", ".join(b.replace("_", " ") for b in cell.broke)
    elif cell.status == "cut_short" and cell.cause in NO_RESULT:
        detail = NO_RESULT[cell.cause or ""]
    # A fact of the run beside its outcome, never part of it (older documents have no remarks).
    remark = "accepted all cookies" if "consent_all" in cell.remarks else ""
    return CellView(run_id=cell.run_id, icon=icon, css=css, words=words, detail=detail, remark=remark,
                    corrected=cell.corrected, short=short_text(cell, station_stage))


CUT_SHORT = {"our_error": "our error", "model_connection": "no model"}


def short_text(cell: MatrixCell, station_stage: str) -> str:
    """The cell's few words at a glance; the whole sentence is its accessible name (the template writes it)."""
    step = f"step {cell.step}" if cell.step else ""
    if cell.status == "stopped":
        elsewhere = cell.stage if cell.stage and cell.stage != station_stage else ""
        return " ".join(p for p in (elsewhere, step) if p)
    if cell.status == "verification_page":
        return step
    if cell.status == "broke_brief":
        return cell.broke[0].replace("_", " ") if cell.broke else ""
    if cell.status == "cut_short":
        return CUT_SHORT.get(cell.cause or "", "")
    return ""


def matrix_rows(matrix: Matrix) -> list[MatrixRow]:
    """Each model's cells in the order of the Matrix's stations."""
    names = matrix.stage_names()
    return [
        MatrixRow(model=m.model, label=m.label, builtin=is_builtin(m.model),
                  cells=[cell_view(m.cells[s.code], s.stage, names) for s in matrix.stations])
        for m in matrix.models
    ]


def with_attempt_marks(rows: list[MatrixRow], codes: list[str],
                       marks: dict[tuple[str, str], AttemptsMark]) -> list[MatrixRow]:
    """The Matrix rows (cells in `codes` order) with the re-run mark of each cell that has one."""
    if not marks:
        return rows
    return [
        msgspec.structs.replace(row, cells=[
            msgspec.structs.replace(cell, attempts=marks.get((row.model, code)))
            for cell, code in zip(row.cells, codes, strict=True)
        ])
        for row in rows
    ]


def rate_view(station: MatrixStation) -> str:
    if station.excluded:
        return "excluded"
    if not station.results:
        return "–"
    return f"{station.passed}/{station.results}"
