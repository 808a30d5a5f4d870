"""The read-model tables inside one transaction: load the facts a page of events needs, write what it changed,
and refresh the documents of the weeks it touched.

Facts are stored as msgspec JSON in a `fact` column next to the columns they are looked up by.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from adapters.sqldb import Tx
from domain.eventlog.schema import Envelope
from domain.projections.documents import NoCourseError, week_documents
from domain.projections.facts import CorrectionFact, OrganisationFact, PublicationFact, ReleaseFact, RunFact, WeekFacts
from domain.projections.fold import ALL, LogState
from domain.projections.repeats import repeats_bytes
from domain.week.weeks import WeekError

_TABLES = (
    "rm_tracking", "rm_runs", "rm_corrections", "rm_releases", "rm_labels", "rm_week_ids", "rm_weeks",
    "rm_publications", "rm_published_documents", "rm_organisations",
)
_CHUNK = 500
_encode = msgspec.json.Encoder().encode
_run = msgspec.json.Decoder(RunFact).decode
_correction = msgspec.json.Decoder(CorrectionFact).decode
_release = msgspec.json.Decoder(ReleaseFact).decode
_publication = msgspec.json.Decoder(PublicationFact).decode
_organisation = msgspec.json.Decoder(OrganisationFact).decode


def _visibility(run: RunFact) -> int:
    """rm_runs.public: 1 a public run (counts), 0 a private test, 2 a private test shown with consent (never
    counts: the ranking, the Matrix and the repeats read public = 1 only)."""
    if run.org is None:
        return 1
    return 2 if run.consented_at is not None else 0


def _documents_row(facts: WeekFacts) -> tuple[str | None, str | None, str | None, str | None]:
    """(course_version, ranking, matrix, repeats) of a week; all None when no course is released or the week
    is malformed."""
    try:
        docs = week_documents(facts)
        repeats = repeats_bytes(facts)
    except (NoCourseError, WeekError):
        return None, None, None, None
    return docs.course_version, docs.ranking.decode(), docs.matrix.decode(), repeats.decode()


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i:i + _CHUNK]


class Tables:
    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    def clear(self) -> None:
        """Empty every read model; the tracking row stays (at 0), so a projector holding its lock keeps it."""
        for table in _TABLES:
            if table != "rm_tracking":
                self.tx.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
        self.tx.execute("UPDATE rm_tracking SET position = 0, global_position = 0 WHERE name = 'record'")

    def lock_tracking(self) -> int:
        """The position applied so far, locked until the transaction ends, so two projectors never apply
        the same page twice (SQLite's BEGIN IMMEDIATE already serialises writers)."""
        self.tx.execute(
            "INSERT INTO rm_tracking (name, position, global_position) VALUES ('record', 0, 0) "
            "ON CONFLICT (name) DO NOTHING"
        )
        sql = "SELECT position FROM rm_tracking WHERE name = 'record'"
        row = self.tx.fetchone(sql + (" FOR UPDATE" if self.tx.postgres else ""))
        return int(row[0]) if row else 0

    def tracking(self) -> tuple[int, int]:
        row = self.tx.fetchone("SELECT position, global_position FROM rm_tracking WHERE name = 'record'")
        return (int(row[0]), int(row[1])) if row else (0, 0)

    # --- loading what a page needs ------------------------------------------------------------------------

    def load_working_set(self, state: LogState, envelopes: Sequence[Envelope]) -> None:
        runs, corrections, weeks, organisations, consenting = set(), set(), set(), set(), set()
        for e in envelopes:
            if e.name.startswith("Organisation."):
                organisations.add(e.originator_id)
                if e.name == "Organisation.ConsentRecorded":
                    consenting.add(e.payload.org)
            if e.name.startswith("Run.") and e.name != "Run.Scheduled":
                runs.add(e.originator_id)
            elif e.name == "Correction.Issued" and e.payload.run_id:
                runs.add(e.payload.run_id)
            elif e.name == "Correction.Withdrawn":
                corrections.add(e.originator_id)
            elif e.name == "Week.Published":
                weeks.add(e.originator_id)
        state.runs.update(self.runs_by_id(sorted(runs)))
        if consenting:  # a consent reaches the organisation's private runs written before this page
            for (fact,) in self.tx.fetchall("SELECT fact FROM rm_runs WHERE public = 0"):
                run = _run(fact)
                if run.org in consenting and run.run_id not in state.runs:
                    state.runs[run.run_id] = run
        for chunk in _chunks(sorted(organisations)):
            for (fact,) in self._select("SELECT fact FROM rm_organisations WHERE organisation_id IN", chunk):
                o = _organisation(fact)
                state.organisations[o.organisation_id] = o
        for chunk in _chunks(sorted(corrections)):
            for (fact,) in self._select("SELECT fact FROM rm_corrections WHERE correction_id IN", chunk):
                c = _correction(fact)
                state.corrections[c.correction_id] = c
        for chunk in _chunks(sorted(weeks)):
            rows = self._select("SELECT record_id, week FROM rm_week_ids WHERE record_id IN", chunk)
            state.week_ids.update((str(r[0]), str(r[1])) for r in rows)
        state.position, state.global_position = self.tracking()

    def _select(self, sql: str, keys: Sequence[str]) -> list[tuple[str, ...]]:
        return [tuple(r) for r in self.tx.fetchall(f"{sql} ({', '.join('?' * len(keys))})", keys)]

    def runs_by_id(self, run_ids: Sequence[str]) -> dict[str, RunFact]:
        found = {}
        for chunk in _chunks(sorted(set(run_ids))):
            for (fact,) in self._select("SELECT fact FROM rm_runs WHERE run_id IN", chunk):
                run = _run(fact)
                found[run.run_id] = run
        return found

    # --- writing what a page changed ----------------------------------------------------------------------

    def write(self, state: LogState) -> None:
        tx = self.tx
        tx.executemany(
            "INSERT INTO rm_runs (run_id, week, model, station, public, fact) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id) DO UPDATE SET fact = excluded.fact, public = excluded.public, week = excluded.week",
            [(r.run_id, r.week, r.model, r.station, _visibility(r), _encode(r).decode())
             for r in (state.runs[i] for i in sorted(state.dirty_runs))],
        )
        tx.executemany(
            "INSERT INTO rm_corrections (correction_id, week, position, fact) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (correction_id) DO UPDATE SET fact = excluded.fact",
            [(c.correction_id, c.week, c.position, _encode(c).decode())
             for c in (state.corrections[i] for i in sorted(state.dirty_corrections))],
        )
        tx.executemany(
            "INSERT INTO rm_organisations (organisation_id, slug, fact) VALUES (?, ?, ?) "
            "ON CONFLICT (organisation_id) DO UPDATE SET fact = excluded.fact",
            [(o.organisation_id, o.slug, _encode(o).decode())
             for o in (state.organisations[i] for i in sorted(state.dirty_organisations))],
        )
        tx.executemany(
            "INSERT INTO rm_releases (version, fact) VALUES (?, ?) ON CONFLICT (version) DO NOTHING",
            [(r.version, _encode(r).decode()) for r in state.releases.values()],
        )
        tx.executemany(
            "INSERT INTO rm_labels (model, label) VALUES (?, ?) "
            "ON CONFLICT (model) DO UPDATE SET label = excluded.label",
            sorted(state.labels.items()),
        )
        tx.executemany(
            "INSERT INTO rm_week_ids (record_id, week) VALUES (?, ?) ON CONFLICT (record_id) DO NOTHING",
            sorted(state.week_ids.items()),
        )
        tx.executemany(
            "INSERT INTO rm_publications (event_position, week, fact) VALUES (?, ?, ?) "
            "ON CONFLICT (event_position) DO NOTHING",
            [(p.event_position, p.week, _encode(p).decode()) for p in state.publications],
        )
        tx.executemany(
            "INSERT INTO rm_weeks (week, position) VALUES (?, ?) "
            "ON CONFLICT (week) DO UPDATE SET position = excluded.position",
            sorted(state.week_positions.items()),
        )
        tx.execute(
            "INSERT INTO rm_tracking (name, position, global_position) VALUES ('record', ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET position = excluded.position, "
            "global_position = excluded.global_position",
            (state.position, state.global_position),
        )

    def write_all(self, state: LogState) -> None:
        """Write a whole folded log into emptied tables at once (COPY on PostgreSQL), every week's documents
        computed once: what a rebuild does instead of a page at a time."""
        tx = self.tx
        tx.copy("rm_runs", ("run_id", "week", "model", "station", "public", "fact"), (
            (r.run_id, r.week, r.model, r.station, _visibility(r), _encode(r).decode())
            for r in sorted(state.runs.values(), key=lambda r: r.run_id)
        ))
        tx.copy("rm_organisations", ("organisation_id", "slug", "fact"), (
            (o.organisation_id, o.slug, _encode(o).decode()) for o in state.organisations.values()
        ))
        tx.copy("rm_corrections", ("correction_id", "week", "position", "fact"), (
            (c.correction_id, c.week, c.position, _encode(c).decode()) for c in state.corrections.values()
        ))
        tx.copy("rm_releases", ("version", "fact"), ((r.version, _encode(r).decode()) for r in state.releases.values()))
        tx.copy("rm_labels", ("model", "label"), sorted(state.labels.items()))
        tx.copy("rm_week_ids", ("record_id", "week"), sorted(state.week_ids.items()))
        tx.copy("rm_publications", ("event_position", "week", "fact"), (
            (p.event_position, p.week, _encode(p).decode()) for p in state.publications
        ))
        tx.copy("rm_weeks", ("week", "position", "course_version", "ranking", "matrix", "repeats"), (
            (facts.week, week_position, *_documents_row(facts))
            for facts, week_position in (
                (f, state.week_positions[f.week]) for f in state.every_week_facts()
            )
        ))
        tx.execute(
            "UPDATE rm_tracking SET position = ?, global_position = ? WHERE name = 'record'",
            (state.position, state.global_position),
        )

    def refresh_weeks(self, touched: set[str]) -> None:
        """Recompute the documents of the touched weeks (every week after a course or line-up change)."""
        weeks = {r[0] for r in self.tx.fetchall("SELECT week FROM rm_weeks")} if ALL in touched else touched
        for week in sorted(weeks - {ALL}):
            row = _documents_row(self.week_facts(week))
            if row[0] is None:
                continue  # no course released yet, or a malformed week: nothing to show
            self.tx.execute(
                "UPDATE rm_weeks SET course_version = ?, ranking = ?, matrix = ?, repeats = ? WHERE week = ?",
                (*row, week),
            )

    def week_facts(self, week: str) -> WeekFacts:
        row = self.tx.fetchone("SELECT position FROM rm_weeks WHERE week = ?", (week,))
        return WeekFacts(
            week=week,
            runs=self.public_runs(week=week),
            corrections=[_correction(r[0]) for r in self.tx.fetchall(
                "SELECT fact FROM rm_corrections WHERE week = ? ORDER BY position", (week,))],
            releases=[_release(r[0]) for r in self.tx.fetchall("SELECT fact FROM rm_releases ORDER BY version")],
            labels={str(r[0]): str(r[1]) for r in self.tx.fetchall("SELECT model, label FROM rm_labels")},
            position=max(int(row[0]) if row else 0, self.tracking()[1]),
        )

    # --- queries ------------------------------------------------------------------------------------------

    def public_runs(self, week: str | None = None, model: str | None = None, station: str | None = None
                    ) -> list[RunFact]:
        where, params = ["public = 1"], []
        for column, value in (("week", week), ("model", model), ("station", station)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        sql = f"SELECT fact FROM rm_runs WHERE {' AND '.join(where)} ORDER BY run_id"  # noqa: S608
        return [_run(r[0]) for r in self.tx.fetchall(sql, params)]

    def shown_runs(self, week: str | None = None, model: str | None = None, station: str | None = None
                   ) -> list[RunFact]:
        """Public runs and consented private tests: what the run index lists (never what counts)."""
        return self._runs("public IN (1, 2)", week, model, station)

    def private_runs(self, org: str | None = None) -> list[RunFact]:
        """Every private test (shown with consent or not), of one organisation when `org` is given."""
        return [r for r in self._runs("public IN (0, 2)", None, None, None) if org is None or r.org == org]

    def _runs(self, visible: str, week: str | None, model: str | None, station: str | None) -> list[RunFact]:
        where, params = [visible], []
        for column, value in (("week", week), ("model", model), ("station", station)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        sql = f"SELECT fact FROM rm_runs WHERE {' AND '.join(where)} ORDER BY run_id"  # noqa: S608
        return [_run(r[0]) for r in self.tx.fetchall(sql, params)]

    def organisations(self) -> list[OrganisationFact]:
        return [_organisation(r[0]) for r in self.tx.fetchall("SELECT fact FROM rm_organisations ORDER BY slug")]

    def corrections(self) -> list[CorrectionFact]:
        return [_correction(r[0]) for r in self.tx.fetchall("SELECT fact FROM rm_corrections ORDER BY position")]

    def publications(self, week: str) -> list[PublicationFact]:
        rows = self.tx.fetchall(
            "SELECT fact FROM rm_publications WHERE week = ? ORDER BY event_position", (week,)
        )
        return [_publication(r[0]) for r in rows]
