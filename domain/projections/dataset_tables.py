"""The open dataset's tables: each column's name, type and meaning, in the order the files hold them.

One list per table is the single source of the Parquet schema, the CSV header and the dataset card, so the three
cannot disagree. Types are named here (the domain imports no Arrow): string, int64, float64, bool, timestamp (UTC,
microseconds). A column that can be empty says so; every other is always filled.
"""

from __future__ import annotations

import msgspec

from domain.projections.scoring import COUNT_BY_START, CountBy

ColumnType = str
"""string, int64, float64, bool or timestamp."""


class Column(msgspec.Struct, frozen=True):
    name: str
    type: ColumnType
    doc: str
    nullable: bool = False


def _c(name: str, type_: ColumnType, doc: str, nullable: bool = False) -> Column:
    return Column(name, type_, doc, nullable)


RUN_COLUMNS: tuple[Column, ...] = (
    _c("week", "string", "The ISO week the run counts for: the week (UTC) in which it started."),
    _c("run_id", "string", "The run's id; its recording is at /runs/<run_id>."),
    _c("model", "string", "The model (entrant) that ran."),
    _c("label", "string", "The model's name as readers see it on the ranking."),
    _c("station", "string", "The course station (s01 is the control store)."),
    _c("station_stage", "string", "The course stage the station tests (control, entry, navigation, ...)."),
    _c("kind", "string", "browser, or reader (the reading station is scored by the reader run)."),
    _c("task", "string", "The task: shop (the course), or arc for ARC-format runs."),
    _c("attempt", "int64", "Which attempt of the scheduled run this is (1 = the first)."),
    _c("repeat", "int64", "0 for the weekly run; 1 and up for repeats measuring variance."),
    _c("status", "string", "scheduled, running, finished or cut_short, at the publication."),
    _c("outcome", "string", "How a finished run ended, as published (corrections in force at the publication "
       "applied): passed, stopped, step_limit, time_limit, verification_page, broke_brief, wrong_answer.", True),
    _c("passed", "bool", "Whether it passed, as published; empty unless finished.", True),
    _c("void", "bool", "Voided by a correction in force at the publication: never a result."),
    _c("stop_stage", "string", "The stage where the run stopped or passed (the judge's verdict).", True),
    _c("stop_step", "int64", "The step at which it stopped or passed (the judge's verdict).", True),
    _c("cause", "string", "Why a cut-short run was cut short: our_error or model_connection. Cut-short runs are "
       "never results.", True),
    _c("steps", "int64", "Steps taken."),
    _c("seconds", "float64", "Wall time of the run in seconds (milliseconds precision)."),
    _c("tokens_in", "int64", "Prompt tokens over all steps (0 for built-in agents)."),
    _c("tokens_out", "int64", "Reply tokens over all steps."),
    _c("cost_usd", "float64", "The cost of the run's calls to the model over all steps, in US dollars (0 for "
       "built-in agents): each call's cost as the gateway reported it or, where it reported none, our estimate "
       "from the per-model prices /agent lists (our assumption, not a quoted price)."),
    _c("agent_release", "int64", "Our agent's release the run used (see /agent); 0 for runs before releases.",
       True),
    _c("agent_version", "string", "Our agent's version string as the worker reported it.", True),
    _c("browser_version", "string", "The browser's version string as the worker reported it.", True),
    _c("course_version", "string", "The course version the run was scheduled on."),
    _c("scheduled_at", "timestamp", "When the run was scheduled (UTC)."),
    _c("started_at", "timestamp", "When it started (UTC).", True),
    _c("ended_at", "timestamp", "When it finished or was cut short (UTC).", True),
    _c("scheduled_position", "int64", "Log position of its Run.Scheduled event."),
    _c("started_position", "int64", "Log position of its Run.Started event.", True),
    _c("end_position", "int64", "Log position of its Run.Finished or Run.CutShort event: breaks ties between runs "
       "starting at the same instant.", True),
    _c("last_position", "int64", "Log position of its newest event up to the publication."),
)

STEP_COLUMNS: tuple[Column, ...] = (
    _c("week", "string", "The ISO week of the run."),
    _c("run_id", "string", "The run the step belongs to (runs.run_id)."),
    _c("model", "string", "The run's model."),
    _c("station", "string", "The run's station."),
    _c("number", "int64", "1-based step number."),
    _c("url", "string", "The page address when the step was observed."),
    _c("title", "string", "The page title."),
    _c("action_kind", "string", "The action chosen: click, type, select, check, press, scroll, back, goto, wait, "
       "stop; empty when the reply was not a valid action.", True),
    _c("action_target", "string", "What it acted on: the element id (click, type, select, check), the key, the "
       "scroll direction, the address (goto), the seconds (wait) or the reason (stop).", True),
    _c("action_value", "string", "The text typed, the option chosen, on/off for check, the note of a stop.", True),
    _c("result", "string", "What happened: ok, refused: <guard>, error: <message>, invalid reply: <message>."),
    _c("duration_ms", "int64", "Wall time of the whole step in milliseconds."),
    _c("model_ms", "int64", "Time spent waiting for the model in milliseconds."),
    _c("tokens_in", "int64", "Prompt tokens of the step."),
    _c("tokens_out", "int64", "Reply tokens of the step."),
    _c("cost_usd", "float64", "The cost of the step's call to the model, in US dollars (0 for built-in agents): "
       "as the gateway reported it or, where it reported none, our estimate from the per-model prices /agent lists "
       "(our assumption, not a quoted price); the step's exchange shows which (its response's usage.cost)."),
    _c("screenshot_sha256", "string", "The screenshot (JPEG) in the blob store, at /blobs/<sha256>.", True),
    _c("elements_sha256", "string", "The element list (JSON) the agent saw.", True),
    _c("exchange_sha256", "string", "The model exchange (prompt, tool schema, raw reply) as JSON.", True),
    _c("position", "int64", "Log position of the Run.StepRecorded event."),
)

VERDICT_COLUMNS: tuple[Column, ...] = (
    _c("week", "string", "The ISO week of the run."),
    _c("run_id", "string", "The run (runs.run_id); one row per run that finished by the publication."),
    _c("model", "string", "The run's model."),
    _c("station", "string", "The run's station."),
    _c("judged_passed", "bool", "The judge's verdict as recorded when the run finished."),
    _c("judged_outcome", "string", "The judge's outcome as recorded."),
    _c("reason", "string", "The judge's reason, in one sentence."),
    _c("published_passed", "bool", "As published: corrections in force at the publication applied; empty when "
       "voided.", True),
    _c("published_outcome", "string", "As published; empty when voided.", True),
    _c("published_void", "bool", "Voided by a correction in force at the publication."),
    _c("corrected_passed", "bool", "As corrected: every correction in force at the release's position applied; "
       "empty when voided.", True),
    _c("corrected_outcome", "string", "As corrected; empty when voided.", True),
    _c("corrected_void", "bool", "Voided by a correction in force at the release's position."),
)

CORRECTION_COLUMNS: tuple[Column, ...] = (
    _c("week", "string", "The week the correction applies to."),
    _c("correction_id", "string", "The correction's id (as on /corrections)."),
    _c("target", "string", "run, model_week or station_week."),
    _c("change", "string", "void, set_outcome or exclude."),
    _c("run_id", "string", "The corrected run, for a run target.", True),
    _c("model", "string", "The model concerned.", True),
    _c("station", "string", "The station concerned.", True),
    _c("passed", "bool", "For set_outcome: whether the run now counts as passed.", True),
    _c("outcome", "string", "For set_outcome: the outcome it now has.", True),
    _c("reason", "string", "Why, as staff recorded it."),
    _c("public_text", "string", "The text published with the ranking."),
    _c("issued_at", "timestamp", "When it was issued (UTC)."),
    _c("position", "int64", "Log position of its Correction.Issued event."),
    _c("withdrawn_at", "timestamp", "When it was withdrawn (UTC), if it was.", True),
    _c("withdrawn_reason", "string", "Why it was withdrawn.", True),
    _c("withdrawn_position", "int64", "Log position of its Correction.Withdrawn event.", True),
    _c("active_at_publication", "bool", "In force at the publication: the published ranking applies it."),
    _c("active_now", "bool", "In force at the release's position: the verdicts as corrected apply it."),
)

STATION_COLUMNS: tuple[Column, ...] = (
    _c("week", "string", "The ISO week."),
    _c("course_version", "string", "The course version in force for the week: only its runs count."),
    _c("code", "string", "The station's code."),
    _c("name", "string", "The station's name."),
    _c("stage", "string", "The course stage it tests (control for s01)."),
    _c("control", "bool", "The control store: a model is ranked only with it passed."),
    _c("reading", "bool", "The reading station, scored by the reader run (every other by the browser run)."),
    _c("excluded", "bool", "Excluded for the week by a correction in force at the publication."),
    _c("excluded_text", "string", "The correction's public text, when excluded.", True),
)

TABLES: dict[str, tuple[Column, ...]] = {
    "runs": RUN_COLUMNS, "steps": STEP_COLUMNS, "verdicts": VERDICT_COLUMNS,
    "corrections": CORRECTION_COLUMNS, "stations": STATION_COLUMNS,
}
"""Table name to its columns, in the order the card lists them: of a week published now, in the current documents
format (which counts by the start) and the current dataset wording (`tables`)."""

DATASET_FORMAT = 2
"""The wording of the open dataset that a publication made now records (Week.Published's dataset_format), so the
card and the column meanings of its releases follow what was published, never the clock: 1 (publications made
before it was recorded) called cost_usd the provider's (list) price; 2 says what it is, the gateway's reported cost
or our estimate from the prices /agent lists (docs/dataset.md)."""

_BY_END = {"runs": {"end_position": "Log position of its Run.Finished or Run.CutShort event: breaks ties between "
                                    "runs ending at the same instant."}}
"""The meanings a week published in documents formats 1 to 3 (counting by the end) gives, as its files always did."""

_AS_LIST_PRICE = {
    "runs": {"cost_usd": "The model provider's cost over all steps, in US dollars."},
    "steps": {"cost_usd": "The step's cost in US dollars."},
}
"""The meanings a week published in dataset format 1 gives, as its files always did (they meant what format 2
says)."""


def tables(count_by: CountBy, dataset_format: int) -> dict[str, tuple[Column, ...]]:
    """The tables of a week published under `count_by` and in `dataset_format`; their columns differ in meaning
    only."""
    older = ([_BY_END] if count_by != COUNT_BY_START else []) + ([_AS_LIST_PRICE] if dataset_format < 2 else [])
    if not older:
        return TABLES
    docs = {name: {k: v for meanings in older for k, v in meanings.get(name, {}).items()} for name in TABLES}
    return {name: tuple(msgspec.structs.replace(c, doc=docs[name][c.name]) if c.name in docs[name] else c
                        for c in columns)
            for name, columns in TABLES.items()}

TABLE_DOCS: dict[str, str] = {
    "runs": "One row a public run of the week, as the log stood at the publication. Sorted by model, station, "
            "scheduled_position.",
    "steps": "One row a step of those runs. Sorted by model, station, the run's scheduled_position, number.",
    "verdicts": "One row a run that finished by the publication: the judge's verdict, as published and as "
                "corrected. Sorted as runs.",
    "corrections": "Every correction of the week up to the release's position, withdrawn ones too. Sorted by "
                   "position.",
    "stations": "The course's stations for the week. Sorted by code.",
}

Row = tuple[object, ...]
"""One row: the values in the table's column order."""
