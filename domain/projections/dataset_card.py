"""The dataset card: what each file, table and column means, the licence, how to cite, the counting rules in SQL.

Written from the release alone (never the clock), so the card is byte-identical when a release is exported again.
"""

from __future__ import annotations

from domain.projections.dataset import WeekDataset
from domain.projections.dataset_tables import TABLE_DOCS, Column, tables
from domain.projections.scoring import COUNT_BY_START, CountBy

_SQL_HEAD = """\
-- A week's places from its runs, stations and corrections (DuckDB); the published ranking, model by model.
WITH eligible AS (   -- runs of the week's course version that score their station (the reader run scores s12)
  SELECT r.* FROM runs r
  JOIN stations s ON s.code = r.station AND s.course_version = r.course_version
  WHERE (r.kind = 'reader') = s.reading
), results AS ("""
_SQL_TAIL = """), obstacles AS (    -- every station but the control, less those a correction excluded
  SELECT code FROM stations WHERE NOT control AND NOT excluded
), scores AS (
  SELECT m.model,
    (SELECT count(*) FROM obstacles) AS "of",
    (SELECT count(*) FROM results r JOIN obstacles o ON o.code = r.station WHERE r.model = m.model) AS tried,
    (SELECT count(*) FROM results r JOIN obstacles o ON o.code = r.station
     WHERE r.model = m.model AND r.passed) AS passed,
    coalesce((SELECT bool_or(r.passed) FROM results r JOIN stations s ON s.code = r.station AND s.control
              WHERE r.model = m.model), false) AS control_passed,
    m.model IN (SELECT model FROM corrections WHERE target = 'model_week' AND change = 'exclude'
                AND active_at_publication) AS excluded
  FROM (SELECT DISTINCT model FROM eligible) m
), ranked AS (       -- control first, then a result from every obstacle station
  SELECT *, control_passed AND tried = "of" AND "of" > 0 AND NOT excluded AS ranked FROM scores
)
SELECT model, ranked, passed, "of",
  CASE WHEN ranked THEN rank() OVER (PARTITION BY ranked ORDER BY passed / "of" DESC) END AS place
FROM ranked
ORDER BY NOT ranked, place, model;
"""

RANKING_SQL = (  # constant text, printed on the card: nothing is substituted into it
    _SQL_HEAD  # noqa: S608
    + "      -- the newest finished, not voided run per model and station, started after the cut-off;\n"
    + """                     -- newest: the latest start (scheduled_at when none was recorded), ties by end_position
  SELECT * FROM eligible
  WHERE status = 'finished' AND NOT void
    AND coalesce(started_at, scheduled_at) >= TIMESTAMPTZ '2026-10-22 09:00:00+00'
  QUALIFY row_number() OVER (
    PARTITION BY model, station ORDER BY coalesce(started_at, scheduled_at) DESC, end_position DESC) = 1
"""
    + _SQL_TAIL
)
"""The counting rules as one DuckDB query over the tables (ties share a place: rank() gives 1, 1, 3), for weeks
published in documents format 4 on."""

RANKING_SQL_BY_END = (
    _SQL_HEAD  # noqa: S608
    + "      -- the newest finished, not voided run per model and station; cut-short runs are no results\n"
    + """  SELECT * FROM eligible
  WHERE status = 'finished' AND NOT void AND ended_at >= TIMESTAMPTZ '2026-10-22 09:00:00+00'
  QUALIFY row_number() OVER (PARTITION BY model, station ORDER BY ended_at DESC, end_position DESC) = 1
"""
    + _SQL_TAIL
)
"""The query of weeks published in documents formats 1 to 3 (the newest run by its end, the cut-off by the end),
as their cards always printed it."""

FILES = ("runs", "steps", "verdicts", "corrections", "stations")

_NEWEST: dict[CountBy, str] = {
    "start": "The newest finished run of the week per model and station counts (the latest start, or when it was "
             "scheduled if no start was recorded; ties by end_position); a run counts for the ISO week (UTC) in which "
             "it started, and runs started before the results cut-off are left out. ",
    "end": "The newest finished run of the week per model and station counts (latest end, ties by log position); a "
           "run counts for the ISO week (UTC) in which it started. ",
}
"""The rule as the card words it, by how the publication counted (formats 1 to 3: by the end, word for word as
their cards were)."""
_CUTOFF: dict[CountBy, str] = {
    "start": "- The results cut-off (2026-10-22 09:00 UTC) leaves out runs started earlier: the SQL repeats it.",
    "end": "- The results cut-off (2026-10-22 09:00 UTC) leaves out earlier runs: the SQL repeats it.",
}
_COSTS = (
    "- cost_usd is the provider's list price at the time of the run, summed as floating point.",
    "- cost_usd is, for each call to the model, the cost the gateway reported or, where it reported none, our "
    "estimate from the per-model prices /agent lists (our assumption, not a quoted list price), summed as floating "
    "point.",
)
"""What cost_usd is, as the card says it in dataset format 1 (word for word as those cards were; it meant what
format 2 says) and from format 2 on."""


def ranking_sql(count_by: CountBy) -> str:
    """The counting rules as one DuckDB query, as the publication counted."""
    return RANKING_SQL if count_by == COUNT_BY_START else RANKING_SQL_BY_END


def card(dataset: WeekDataset) -> str:
    p = dataset.publication
    lines = [
        "---",
        "license: cc-by-4.0",
        f"pretty_name: CanItBuy open dataset, {dataset.week}",
        "---",
        "",
        f"# CanItBuy open dataset: {dataset.week}",
        "",
        f"Every public run and step of {dataset.week} on the CanItBuy course {dataset.course_version}, as Parquet "
        "and CSV (the same rows in both).",
        "",
        f"- Publication: {dataset.publication_number} of the week{' (provisional)' if p.provisional else ''}, "
        f"at log position {p.position}; ranking sha256 {p.ranking_sha256}.",
        f"- Release: log position {dataset.release} (the verdicts as corrected and the corrections read the log "
        "up to it; everything else up to the publication).",
        "- Licence: CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/).",
        f"- Cite as: {dataset.citation}; dataset release {dataset.week}@{dataset.release}.",
        "- SHA256SUMS lists the sha256 of every other file: `sha256sum -c SHA256SUMS`.",
        "",
        "## Counting rules",
        "",
        _NEWEST[dataset.count_by] + "Runs cut short (our_error, model_connection) are never "
        "results, nor are voided runs or runs of another course version. The reading station is scored by the "
        "reader run, every other station by the browser run. A model is ranked only with the control station "
        "(s01) passed and a result from every obstacle station not excluded that week; its score is the share "
        "passed, and equal shares share a place (1, 1, 3). This query gives the published places:",
        "",
        "```sql",
        ranking_sql(dataset.count_by).rstrip(),
        "```",
        "",
    ]
    columns = tables(dataset.count_by, dataset.dataset_format)
    for name in FILES:
        lines += _table(name, columns[name])
    lines += [
        "## Known limits",
        "",
        "- Private tests are never included; their runs and steps are not in any table.",
        "- Runs that finished after the publication are not in this release; a later publication makes a new one.",
        "- Screenshots, element lists and model exchanges are named by sha256, not included: fetch them from the "
        "site's blob store.",
        _COSTS[0 if dataset.dataset_format < 2 else 1],
        _CUTOFF[dataset.count_by],
        "",
    ]
    return "\n".join(lines)


def _table(name: str, columns: tuple[Column, ...]) -> list[str]:
    out = [f"## {name} ({name}.parquet, {name}.csv)", "", TABLE_DOCS[name], "", "| column | type | meaning |",
           "|---|---|---|"]
    for c in columns:
        kind = c.type + (", may be empty" if c.nullable else "")
        out.append(f"| {c.name} | {kind} | {c.doc.replace('|', '/')} |")
    return [*out, ""]
