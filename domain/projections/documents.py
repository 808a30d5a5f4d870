"""The week's public documents, the ranking and the Matrix, as canonical JSON (CC BY 4.0).

Both are computed from a week's facts only, at the newest log position those facts come from, so replaying
the log up to any later position that added nothing to the week gives the same bytes. Their shapes are
documented field by field in docs/schemas/ranking.json and docs/schemas/matrix.json.
"""

from __future__ import annotations

from datetime import date, timedelta
from fractions import Fraction
from functools import lru_cache
from typing import Annotated, Any, Final, Literal

import msgspec

from domain.agent.verdicts import accepted_all_cookies
from domain.courses.course import CourseSpec, decode_course
from domain.projections.canonical import canonical_struct_bytes, decimal_text
from domain.projections.facts import ReleaseFact, RunFact, WeekFacts
from domain.projections.format_four import matrix_four
from domain.projections.format_one import matrix_one, ranking_one
from domain.projections.format_two import matrix_two
from domain.projections.scoring import COUNT_BY_END, COUNT_BY_START, CountBy, Entry, WeekScore, newest, score_week
from domain.week.weeks import week_end

LICENSE: Final = "CC BY 4.0"
DOCUMENTS_FORMAT = 5
"""The format the documents are written in now. A publication records the format it was made in and replays in it
(format 1: weeks published before December 2026, see domain/projections/format_one.py; format 2: the Matrix
without its stage order, see domain/projections/format_two.py; format 3: the newest run is the one that finished
last and the cut-off applies to its end, see `counting_rule`; format 4: a station's pass rate counted every model's
result, not only those of the models that passed S01, see `control_first` and domain/projections/format_four.py)."""
RANKING_FORMAT = "canitbuy-ranking/3"
"""Each document names its own version. Format 4 changed which run both documents count, so both have a new name;
format 3 wrote the ranking as format 2 did, and format 5 writes it as format 4 did (`FORMAT_NAMES`)."""
MATRIX_FORMAT = f"canitbuy-matrix/{DOCUMENTS_FORMAT}"
FORMAT_NAMES: Final = {
    3: ("canitbuy-ranking/2", "canitbuy-matrix/3"),
    4: (RANKING_FORMAT, "canitbuy-matrix/4"),
    DOCUMENTS_FORMAT: (RANKING_FORMAT, MATRIX_FORMAT),
}
"""(ranking, Matrix) names by documents format, of the formats written here; format_one.py and format_two.py rename
theirs (formats 1 and 2 are built from format 3)."""


def _names(documents_format: int) -> tuple[str, str]:
    return FORMAT_NAMES[max(documents_format, 3)]


def counting_rule(documents_format: int) -> CountBy:
    """Which run counts in a documents format: from format 4 the newest run is the one that started last and the
    cut-off applies to its start; formats 1 to 3 counted by the end, and replay that way."""
    return COUNT_BY_START if documents_format >= 4 else COUNT_BY_END


def control_first(documents_format: int) -> bool:
    """Whether a station's pass rate counts control-first in a documents format: from format 5 only the results of
    the models that passed the control S01 that week and that no correction excluded from the week (S01's own rate:
    every model's S01 result, less the excluded models), as the score counts; formats 1 to 4 counted every model's
    result, and replay that way."""
    return documents_format >= 5


class NoCourseError(LookupError):
    """No course version was released in the log read so far."""


class WeekDocuments(msgspec.Struct, frozen=True, kw_only=True):
    week: str
    course_version: str
    position: int
    ranking: bytes
    matrix: bytes
    documents_format: int = DOCUMENTS_FORMAT


@lru_cache(maxsize=8)
def _course(spec: str) -> CourseSpec:
    return decode_course(spec)


def course_for_week(releases: list[ReleaseFact], week: str) -> CourseSpec:
    """The newest version in force before the week ended; a week before every release takes the first."""
    if not releases:
        raise NoCourseError("no course version is released in the log")
    ordered = sorted(releases, key=lambda r: (r.released_at, r.position))
    in_force = [r for r in ordered if r.released_at < week_end(week)] or ordered[:1]
    return _course(in_force[-1].spec)


CITED_AS = "CanItBuy AI agent ranking, canitbuy.com/ranking"
"""The method's citation, word for word ("Cite as: CanItBuy AI agent ranking, canitbuy.com/ranking, week and date")."""


def as_of(facts: WeekFacts) -> date:
    """The date of the citation: the day of the newest result or correction the week's documents hold.

    Taken from the facts (never the clock), so a replay cites the same date; a later correction moves it on.
    """
    times = [r.ended_at or r.started_at or r.scheduled_at for r in facts.runs if r.week == facts.week and r.org is None]
    times += [c.withdrawn_at or c.issued_at for c in facts.corrections if c.week == facts.week]
    return max(times).date() if times else (week_end(facts.week) - timedelta(days=1)).date()


def citation(facts: WeekFacts) -> str:
    """How to cite the week's data, exactly as the method gives it: "<ranking>, <week>, <date>"."""
    return f"{CITED_AS}, {facts.week}, {as_of(facts).isoformat()}"


NoResult = Literal["our_error", "model_connection", "not_run"]
Reason = Literal["excluded", "no_control_pass", "no_control_result", "stations_missing"]
CellStatus = Literal["passed", "stopped", "verification_page", "broke_brief", "cut_short", "not_run"]
Week = Annotated[str, msgspec.Meta(pattern=r"^\d{4}-W\d{2}$")]
Decimal4 = Annotated[str, msgspec.Meta(pattern=r"^[01]\.[0-9]{4}$")]


class Document(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """What every weekly document starts with (canonical JSON: sorted keys, no whitespace)."""

    format: str
    """Document format and version."""
    license: Literal["CC BY 4.0"]
    """The data licence."""
    week: Week
    """The ISO week (Monday to Sunday, UTC)."""
    course_version: str
    """The course version the week ran, e.g. 2.1."""
    position: Annotated[int, msgspec.Meta(ge=0)]
    """The event-log position the document was computed at: the newest event it depends on. Replaying the log up
    to it gives these bytes."""
    citation: str
    """How to cite this document, as the method gives it: "CanItBuy AI agent ranking, canitbuy.com/ranking,
    <week>, <date>"; the date is the day of the newest result or correction the week holds."""


class ExcludedStation(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """A station left out for everyone this week."""

    station: str
    """Station code."""
    text: str
    """Public text of the correction."""


class RankingEntry(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """One model's line of the ranking."""

    model: str
    """Model or built-in agent name. The built-in agents (baseline-naive, -patient, -structured, -careful, -robust)
    are CanItBuy's reference agents written as rules, not AI models: no screenshot, and three of them read the
    page's structured data (docs/agents.md)."""
    label: str
    """Its name as shown to readers."""
    ranked: bool
    """True when the model has a place this week."""
    place: int | None
    """Competition place (1, 1, 3): equal shares share a place; null when unranked."""
    passed: int
    """Counted obstacle stations passed."""
    of: int
    """Obstacle stations that count this week (17 unless a station was excluded)."""
    share: Decimal4 | None
    """passed / of, four decimals, rounded half up; null when unranked."""
    control_passed: bool
    """Whether the newest s01 run of the week passed."""
    missing: list[str]
    """Counting stations without a result."""
    reasons: list[Reason]
    """Why unranked; empty when ranked. no_control_result: no result in s01 (its run was cut short or not run, see
    no_result); no_control_pass: s01's result did not reach the checkout; stations_missing: obstacle stations
    without a result (see no_result)."""
    excluded_text: str | None
    """The public text of the correction that excluded the model this week."""
    no_result: dict[str, NoResult] = {}
    """Station to why it has no result this week, for s01 (when no_control_result) and every missing station:
    our_error or model_connection (its last run was cut short, which is not a result and not the model's
    failure), not_run. Absent in documents made before it was added."""
    accepted_all_cookies: Annotated[int, msgspec.Meta(ge=0)] | None = None
    """Counted results this week (the Matrix's cells) in which the agent accepted all cookies on the shopper's
    behalf. A remark beside the score, never part of it. Absent in documents made before it was added."""


class RankingCorrection(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """A correction in force for the week."""

    id: str
    """Correction id."""
    target: Literal["run", "model_week", "station_week"]
    """What it corrects: one run, a model's week or a station's week."""
    change: Literal["void", "set_outcome", "exclude", "note"]
    """What it does to the target."""
    text: str
    """Public text."""
    model: str | None
    """Model concerned."""
    station: str | None
    """Station concerned."""
    run_id: str | None
    """Run concerned."""


class Ranking(Document, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """CanItBuy ranking of one ISO week (canonical JSON: sorted keys, no whitespace). Per model and station the
    newest run of the week counts: from canitbuy-ranking/3 on, the one that started last, and a run started before
    22 October 2026, 09:00 UTC is no result; canitbuy-ranking/1 and /2 took the one that finished last and applied
    that cut-off to its end."""

    control: str
    """The control station."""
    stations: list[str]
    """Obstacle stations that count this week."""
    excluded_stations: list[ExcludedStation]
    """Stations left out for everyone this week."""
    entries: list[RankingEntry]
    """Ranked models by place then name, then unranked models by name."""
    corrections: list[RankingCorrection]
    """Corrections in force for this week, oldest first."""


def _entry(entry: Entry, labels: dict[str, str], score: WeekScore, runs: list[RunFact], control: str
           ) -> RankingEntry:
    without = ([control] if "no_control_result" in entry.reasons else []) + entry.missing
    return RankingEntry(
        model=entry.model, label=labels.get(entry.model, entry.model), ranked=entry.ranked,
        place=entry.place, passed=entry.passed, of=entry.of,
        share=decimal_text(entry.share) if entry.share is not None else None,
        control_passed=entry.control_passed, missing=entry.missing, reasons=entry.reasons,  # type: ignore[arg-type]
        excluded_text=entry.excluded_text,
        no_result={code: _why_no_result(entry.model, code, runs, score.count_by) for code in without},
        accepted_all_cookies=sum(
            1 for (model, _), run in score.results.items()
            if model == entry.model and run.verdict is not None and accepted_all_cookies(run.verdict)
        ),
    )


def _last_tried(model: str, station: str, runs: list[RunFact], count_by: CountBy) -> RunFact | None:
    """The newest run of the cell that ended, result or not, newest as the format counts (scoring.newest_order)."""
    return newest((r for r in runs if r.model == model and r.station == station and r.ended_at is not None), count_by)


def _why_no_result(model: str, station: str, runs: list[RunFact], count_by: CountBy) -> NoResult:
    """our_error or model_connection (the last run was cut short, not the model's failure), else not_run."""
    last = _last_tried(model, station, runs, count_by)
    if last is not None and last.status == "cut_short" and last.cut_short_cause:
        return last.cut_short_cause  # type: ignore[return-value]
    return "not_run"


def _week_runs(facts: WeekFacts) -> list[RunFact]:
    return [r for r in facts.runs if r.week == facts.week and r.org is None]


def ranking_document(facts: WeekFacts, course: CourseSpec, score: WeekScore,
                     documents_format: int = DOCUMENTS_FORMAT) -> Ranking:
    """The ranking of `score`, which counted as `documents_format` does (`counting_rule`)."""
    runs = _week_runs(facts)
    return Ranking(
        format=_names(documents_format)[0], license=LICENSE, week=facts.week, course_version=course.version,
        position=facts.position,
        citation=citation(facts), control=course.control.code, stations=score.stations,
        excluded_stations=[ExcludedStation(station=s, text=t) for s, t in sorted(score.excluded_stations.items())],
        entries=[_entry(e, facts.labels, score, runs, course.control.code) for e in score.entries],
        corrections=[
            RankingCorrection(id=c.correction_id, target=c.target, change=c.change, text=c.public_text,  # type: ignore[arg-type]
                              model=c.model, station=c.station, run_id=c.run_id)
            for c in sorted(facts.corrections, key=lambda c: c.position) if c.active
        ],
    )


class MatrixStation(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """A station (a column of the Matrix) with its pass rate this week. From canitbuy-matrix/5 on the rate counts
    control-first, as the score does: at an obstacle station only the results of the models that passed the control
    (s01) this week, and at s01 every model's result; a model a correction excluded from the week counts nowhere.
    canitbuy-matrix/1 to /4 counted every model's result."""

    code: str
    """Station code."""
    name: str
    """Station name."""
    stage: str
    """Course stage."""
    excluded: bool
    """Left out for everyone this week."""
    excluded_text: str | None
    """Why."""
    passed: int
    """Counted models that passed it."""
    results: int
    """Counted models with a result (see the station's description)."""
    rate: Decimal4 | None
    """passed / results; null without results."""
    not_counted: list[str] = []
    """Models with a result here that passed and results leave out, by name: at an obstacle station those that did
    not pass s01 this week, and at every station those a correction excluded from the week. Absent before
    canitbuy-matrix/5."""


class MatrixCell(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """One model on one station this week: the run that counts, or why there is none."""

    status: CellStatus
    """What the counted run did; cut_short / not_run when there is no result."""
    run_id: str | None
    """The counted run, or the last run that is not a result."""
    outcome: str | None
    """The judge's outcome (passed, stopped, step_limit, time_limit, verification_page, broke_brief,
    wrong_answer)."""
    stage: str | None
    """Course stage where it stopped."""
    step: int | None
    """Step at which it stopped or passed."""
    broke: list[str]
    """Rules of the brief the order broke."""
    corrected: bool
    """A correction applies to this run."""
    remarks: list[Literal["consent_all"]] = []
    """Facts of the counted run beside its outcome, never part of it: consent_all when the agent accepted all
    cookies on the shopper's behalf. Absent in documents made before it was added."""
    cause: Literal["our_error", "model_connection"] | None = None
    """For a cut_short cell: why the last run was cut short (our_error, or model_connection: the model could not
    be reached); null otherwise. Absent in documents made before it was added."""


class MatrixModel(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """A model (a row of the Matrix)."""

    model: str
    """Model or built-in agent name (baseline-*: a reference agent written as rules, not an AI model; see the
    ranking's entries)."""
    label: str
    """Label."""
    cells: dict[str, MatrixCell]
    """Station code to cell."""


class MatrixStage(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """A stage of the course: a group of the Matrix's columns."""

    key: str
    """Stage key (control for the control station)."""
    name: str
    """Stage name as shown to readers."""
    stations: list[str]
    """Its station codes, in the Matrix's order; empty for a stage no station tests."""


class Matrix(Document, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """CanItBuy Matrix of one ISO week: models x stations. A cell holds the run the ranking counts: from
    canitbuy-matrix/4 on, the newest run by its start (canitbuy-matrix/1 to /3: by its end), as the ranking's
    description says. From canitbuy-matrix/5 on the stations' pass rates count control-first (see a station's
    description)."""

    stations: list[MatrixStation]
    """Every station of the course in the course's stage order: the control (s01) first, then each stage in the
    course's order, the course's order within a stage (format 2 and earlier: the course's order, s01 first)."""
    models: list[MatrixModel]
    """Every model with a run this week, by name."""
    stages: list[MatrixStage] = []
    """Every stage of the course in that order, the control first, each with its stations: the groups of the
    Matrix's columns. Absent in documents made before format 3."""

    def stage_names(self) -> dict[str, str]:
        """Stage names by key, as shown to readers."""
        return {stage.key: stage.name for stage in self.stages}


def stage_order(course: CourseSpec) -> list[MatrixStage]:
    """The course's stages in order (control first), each with its stations in the course's order."""
    keys = ["control", *(s.key for s in course.stages)]
    keys += [k for k in dict.fromkeys(s.stage for s in course.stations) if k not in keys]
    return [MatrixStage(key=k, name=course.stage_name(k), stations=[s.code for s in course.stations if s.stage == k])
            for k in keys]


def in_stage_order(matrix: Matrix, course: CourseSpec) -> Matrix:
    """A Matrix of format 2 or earlier (stations in the course's order, no stages) as format 3 carries it, from its
    course: for pages showing an older week, never part of a document."""
    if matrix.stages:
        return matrix
    stages = stage_order(course)
    by_code = {s.code: s for s in matrix.stations}
    stations = [by_code[code] for stage in stages for code in stage.stations if code in by_code]
    placed = {s.code for s in stations}
    stations += [s for s in matrix.stations if s.code not in placed]
    return msgspec.structs.replace(matrix, stations=stations, stages=stages)


def _cell(model: str, station: str, score: WeekScore, runs: list[RunFact], corrected: set[str]) -> MatrixCell:
    run = score.results.get((model, station))
    if run is not None and run.verdict is not None:
        v = run.verdict
        status = v.outcome if v.outcome in ("passed", "verification_page", "broke_brief") else "stopped"
        return MatrixCell(
            status=status, run_id=run.run_id, outcome=v.outcome, stage=v.stage, step=v.step,
            broke=list(v.broke), corrected=run.run_id in corrected,
            remarks=["consent_all"] if accepted_all_cookies(v) else [], cause=None,
        )
    last = _last_tried(model, station, runs, score.count_by)
    cut = bool(last and last.status == "cut_short")
    return MatrixCell(
        status="cut_short" if cut else "not_run",
        run_id=last.run_id if last else None, outcome=None, stage=None, step=None, broke=[],
        corrected=bool(last and last.run_id in corrected), remarks=[],
        cause=last.cut_short_cause if cut and last else None,  # type: ignore[arg-type]
    )


def counted_models(code: str, course: CourseSpec, score: WeekScore) -> set[str]:
    """The models whose results a station's pass rate counts control-first: not excluded from the week, and at an
    obstacle station with s01 passed this week (the ranking's `control_passed`)."""
    return {e.model for e in score.entries
            if e.excluded_text is None and (code == course.control.code or e.control_passed)}


def _station(code: str, course: CourseSpec, score: WeekScore, documents_format: int) -> MatrixStation:
    station = course.station(code)
    every = {m: r for (m, s), r in score.results.items() if s == code}
    counted = counted_models(code, course, score) if control_first(documents_format) else set(every)
    results = [r for m, r in every.items() if m in counted]
    passed = sum(1 for r in results if r.verdict is not None and r.verdict.passed)
    return MatrixStation(
        code=code, name=station.name, stage=station.stage,
        excluded=code in score.excluded_stations, excluded_text=score.excluded_stations.get(code),
        passed=passed, results=len(results),
        rate=decimal_text(Fraction(passed, len(results))) if results else None,
        not_counted=sorted(m for m in every if m not in counted),
    )


def matrix_document(facts: WeekFacts, course: CourseSpec, score: WeekScore,
                    documents_format: int = DOCUMENTS_FORMAT) -> Matrix:
    """The Matrix of `score`, which counted as `documents_format` does (`counting_rule`)."""
    runs = _week_runs(facts)
    corrected = {c.run_id for c in facts.corrections if c.active and c.run_id}
    stages = stage_order(course)
    return Matrix(
        format=_names(documents_format)[1], license=LICENSE, week=facts.week, course_version=course.version,
        position=facts.position,
        citation=citation(facts), stages=stages,
        stations=[_station(code, course, score, documents_format) for stage in stages for code in stage.stations],
        models=[
            MatrixModel(model=m, label=facts.labels.get(m, m),
                        cells={code: _cell(m, code, score, runs, corrected) for code in course.codes})
            for m in score.models
        ],
    )


class UnknownFormatError(ValueError):
    """A publication or audit file names a documents format this code does not write."""


def week_documents(facts: WeekFacts, documents_format: int = DOCUMENTS_FORMAT) -> WeekDocuments:
    """The week's ranking and Matrix in `documents_format` (a publication's own format, to replay it)."""
    if documents_format not in range(1, DOCUMENTS_FORMAT + 1):
        raise UnknownFormatError(f"documents format {documents_format} is not one this version writes (1 to "
                                 f"{DOCUMENTS_FORMAT})")
    course = course_for_week(facts.releases, facts.week)
    score = score_week(facts.week, facts.runs, facts.corrections, course, counting_rule(documents_format))
    ranking: Any = ranking_document(facts, course, score, documents_format)
    matrix: Any = matrix_document(facts, course, score, documents_format)
    if documents_format <= 4:  # each earlier format is frozen and works on the builtins of the next one
        matrix = matrix_four(msgspec.to_builtins(matrix))
    if documents_format in (1, 2):
        matrix = matrix_two(matrix, course)
    if documents_format == 1:  # (format 2's ranking is format 3's)
        ranking = ranking_one(msgspec.to_builtins(ranking), facts, course)
        matrix = matrix_one(matrix, facts, course)
    return WeekDocuments(
        week=facts.week, course_version=course.version, position=facts.position,
        ranking=canonical_struct_bytes(ranking), matrix=canonical_struct_bytes(matrix),
        documents_format=documents_format,
    )
