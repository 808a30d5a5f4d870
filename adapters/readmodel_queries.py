"""What the site's pages, the operator's commands and publishing read from the read models, besides a week's
documents as corrected: the week list, its publications and their documents, the repeat runs, the run index and a
run, the corrections, private tests and organisations.

`ReadModelQueries` is the base class of `adapters.readmodels.ReadModels`, so every caller keeps one object
(`runtime.readmodels`). It is a module of its own because none of it is on the path from a browser step to a
Matrix cell (docs/architecture.md): that path crosses readmodels.py, where the projection loop writes the rm_
tables (`Tables`) and `week_documents` reads a week's documents back. The queries here read those tables, and
through `Tables` what the projection reads as well (a run by id, a week's facts, its public runs). What they need
of ReadModels and of `Tables` is declared here (the class's attributes, `TableReads`), so the import goes one way:
readmodels.py imports this module, never the other way round.

Methods (all synchronous; call them from a worker thread in async code):
- `weeks() -> list[WeekInfo]`: weeks with public results, newest first, with publication status.
- `publications(week) -> list[PublicationFact]`; `published_documents(week, index=None) -> WeekDocuments` (the
  standing publication's by default, recomputed by replay when not stored); `store_published(documents)`.
- `ranking_bytes(week, as_published=False)`, `matrix_bytes(week, as_published=False) -> bytes`: canonical JSON.
  Raise UnknownWeekError or NotPublishedError.
- `repeats_bytes(week) -> bytes`: the week's repeat-run document (docs/schemas/repeats.json), as corrected; it is
  not part of a publication. Raises UnknownWeekError.
- `running_runs(week) -> int`: public runs counting for the week that have started and not ended (publishing).
- `models_with_runs(week) -> list[str]`, `stations_with_runs(week) -> list[str]`: the models, the stations with a
  public run counting for the week (issuing a correction of a model's or a station's week).
- `week_facts(week) -> WeekFacts`: what the week's documents are computed from (the staff preview).
- `corrections() -> bytes`, `runs_index(week=None, model=None, station=None) -> bytes`,
  `run(run_id) -> RunFact` (public runs and consented private tests; raises UnknownRunError).
- `private_runs(org=None)`, `organisations()`: private tests and organisations, for members and staff only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Literal, Protocol

import msgspec

from adapters.sqldb import SqlDb, Tx
from domain.eventlog.record import Record, UnknownRunError
from domain.projections import logs
from domain.projections.canonical import sha256_hex
from domain.projections.documents import Matrix, WeekDocuments
from domain.projections.facts import CorrectionFact, OrganisationFact, PublicationFact, RunFact, WeekFacts
from domain.projections.repeats import REPEATS_FORMAT
from domain.projections.repeats import repeats_bytes as repeats_document_bytes
from domain.week.publications import standing
from domain.week.publishing import NotPublishedError, UnknownWeekError, documents_as_published

_run = msgspec.json.Decoder(RunFact).decode
_correction = msgspec.json.Decoder(CorrectionFact).decode
_organisation = msgspec.json.Decoder(OrganisationFact).decode
_publication = msgspec.json.Decoder(PublicationFact).decode
_matrix = msgspec.json.Decoder(Matrix).decode
_CURRENT_REPEATS = f'"format":"{REPEATS_FORMAT}"'
"""How a repeats document of the current format names itself (canonical JSON)."""


class WeekInfo(msgspec.Struct, frozen=True):
    week: str
    course_version: str | None
    position: int
    publications: int
    provisional: bool = False
    """Published only provisionally so far (the week was in progress); its final publication supersedes it."""


class TableReads(Protocol):
    """What the queries read through `adapters.readmodels.Tables`: reads the projection makes as well."""

    tx: Tx

    def runs_by_id(self, run_ids: Sequence[str]) -> dict[str, RunFact]: ...

    def public_runs(self, week: str) -> list[RunFact]: ...

    def week_facts(self, week: str) -> WeekFacts: ...


class ReadModelQueries:
    db: SqlDb
    record: Record
    tables: Callable[[], AbstractContextManager[TableReads]]
    """The read models' tables inside one transaction."""
    week_documents: Callable[[str], WeekDocuments]
    """The week's documents as corrected; raises UnknownWeekError."""
    _replayed: dict[int, WeekDocuments]
    """Publications (by event position) replayed because another one's bytes hold their row of
    rm_published_documents (`published_documents`), kept for the process."""

    # --- weeks and their publications ----------------------------------------------------------------------

    def weeks(self) -> list[WeekInfo]:
        with self.db.transaction() as tx:
            rows = tx.fetchall(
                "SELECT w.week, w.course_version, w.position, "
                "(SELECT COUNT(*) FROM rm_publications p WHERE p.week = w.week) FROM rm_weeks w "
                "WHERE w.ranking IS NOT NULL ORDER BY w.week DESC"
            )
            final = {str(r[0]) for r in tx.fetchall("SELECT week, fact FROM rm_publications")
                     if not _publication(r[1]).provisional}
        return [WeekInfo(str(r[0]), r[1], int(r[2]), int(r[3]), provisional=bool(r[3]) and str(r[0]) not in final)
                for r in rows]

    def publications(self, week: str) -> list[PublicationFact]:
        with self.db.transaction() as tx:
            rows = tx.fetchall("SELECT fact FROM rm_publications WHERE week = ? ORDER BY event_position", (week,))
        return [_publication(r[0]) for r in rows]

    def published_documents(self, week: str, index: int | None = None) -> WeekDocuments:
        """A publication's documents (the standing one by default: the first final publication, else the newest
        provisional one), replayed from the log when not stored."""
        pubs = self.publications(week)
        if not pubs:
            self.week_documents(week)  # an unknown week says so rather than "not published"
            raise NotPublishedError(week)
        pub = pubs[standing(pubs) if index is None else index]
        with self.db.transaction() as tx:
            row = tx.fetchone(
                "SELECT ranking, matrix FROM rm_published_documents WHERE week = ? AND position = ?",
                (week, pub.position),
            )
        if row is not None and (sha256_hex(row[0].encode()), sha256_hex(row[1].encode())) == (
                pub.ranking_sha256, pub.matrix_sha256):
            return WeekDocuments(
                week=week, course_version=pub.course_version, position=pub.position, ranking=row[0].encode(),
                matrix=row[1].encode(), documents_format=pub.documents_format,
            )
        if row is None:
            docs = documents_as_published(self.record.read_log, pub)
            self.store_published(docs)
            return docs
        # Another publication of the week at the same position, in another documents format (a week published
        # again after a format change): its bytes hold the table's row, so this one is replayed, once a process.
        if pub.event_position not in self._replayed:
            self._replayed[pub.event_position] = documents_as_published(self.record.read_log, pub)
        return self._replayed[pub.event_position]

    def store_published(self, documents: WeekDocuments) -> None:
        with self.db.transaction() as tx:
            tx.execute(
                "INSERT INTO rm_published_documents (week, position, ranking, matrix) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (week, position) DO NOTHING",
                (documents.week, documents.position, documents.ranking.decode(), documents.matrix.decode()),
            )

    def ranking_bytes(self, week: str, as_published: bool = False) -> bytes:
        return (self.published_documents(week) if as_published else self.week_documents(week)).ranking

    def matrix_bytes(self, week: str, as_published: bool = False) -> bytes:
        return (self.published_documents(week) if as_published else self.week_documents(week)).matrix

    def repeats_bytes(self, week: str) -> bytes:
        """The week's repeat-run document (canonical JSON, as corrected); raises UnknownWeekError."""
        with self.tables() as tables:
            row = tables.tx.fetchone("SELECT ranking, repeats FROM rm_weeks WHERE week = ?", (week,))
            if row is None or row[0] is None:
                raise UnknownWeekError(week)
            if row[1] is not None and _CURRENT_REPEATS in str(row[1]):
                return str(row[1]).encode()
            return repeats_document_bytes(tables.week_facts(week))  # weeks refreshed before 0011 or its format

    def running_runs(self, week: str) -> int:
        with self.tables() as tables:
            return sum(1 for r in tables.public_runs(week) if r.status == "running")

    def models_with_runs(self, week: str) -> list[str]:
        """The models with a public run that counts for the week (rm_runs.week: the week it started in; not started
        yet, the week it was scheduled for), sorted; never a private test's, consented or not."""
        return self._with_runs("model", week)

    def stations_with_runs(self, week: str) -> list[str]:
        """The stations with a public run that counts for the week, as `models_with_runs` counts them, sorted (one
        not on the course never has one)."""
        return self._with_runs("station", week)

    def _with_runs(self, column: Literal["model", "station"], week: str) -> list[str]:
        sql = f"SELECT DISTINCT {column} FROM rm_runs WHERE week = ? AND public = 1 ORDER BY {column}"  # noqa: S608
        with self.db.transaction() as tx:
            rows = tx.fetchall(sql, (week,))
        return [str(r[0]) for r in rows]

    def week_facts(self, week: str) -> WeekFacts:
        """What the week's documents are computed from (the staff preview folds a correction into a copy)."""
        with self.tables() as tables:
            return tables.week_facts(week)

    # --- runs, corrections and organisations -----------------------------------------------------------------

    def corrections(self) -> bytes:
        with self.tables() as tables:
            rows = tables.tx.fetchall("SELECT fact FROM rm_corrections ORDER BY position")
            corrections = [_correction(r[0]) for r in rows]
            runs = tables.runs_by_id([c.run_id for c in corrections if c.run_id])
        return logs.corrections_log(corrections, runs)

    def runs_index(self, week: str | None = None, model: str | None = None, station: str | None = None) -> bytes:
        """Public runs and consented private tests (never what counts), filtered by any of week, model, station."""
        with self.db.transaction() as tx:
            return logs.runs_index(_runs(tx, "public IN (1, 2)", week=week, model=model, station=station))

    def run(self, run_id: str) -> RunFact:
        with self.tables() as tables:
            found = tables.runs_by_id([str(run_id)])
        run = found.get(str(run_id))
        if run is None or not logs.shown(run):
            raise UnknownRunError(run_id)
        return run

    def private_runs(self, org: str | None = None) -> list[RunFact]:
        """Private tests, consented or not (every organisation's when `org` is None): for members and staff."""
        with self.db.transaction() as tx:
            return [r for r in _runs(tx, "public IN (0, 2)") if org is None or r.org == org]

    def organisations(self) -> list[OrganisationFact]:
        with self.db.transaction() as tx:
            rows = tx.fetchall("SELECT fact FROM rm_organisations ORDER BY slug")
        return [_organisation(r[0]) for r in rows]


def visibility(run: RunFact) -> int:
    """rm_runs.public, written by the read models and read by `_runs` below: 1 a public run (counts), 0 a
    private test, 2 a private test shown with consent (never counts: the ranking, the Matrix and the repeats
    read public = 1 only)."""
    if run.org is None:
        return 1
    return 2 if run.consented_at is not None else 0


def _runs(tx: Tx, visible: str, week: str | None = None, model: str | None = None, station: str | None = None
          ) -> list[RunFact]:
    """Runs by `visible`, a condition on rm_runs.public (1 a public run, 0 a private test, 2 one shown with
    consent: `visibility`), and by week, model and station when given."""
    where, params = [visible], []
    for column, value in (("week", week), ("model", model), ("station", station)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    sql = f"SELECT fact FROM rm_runs WHERE {' AND '.join(where)} ORDER BY run_id"  # noqa: S608
    return [_run(r[0]) for r in tx.fetchall(sql, params)]
