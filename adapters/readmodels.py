"""The read models: a projection loop of our own that keeps the site's tables up to date with the log.

The library's ProjectionRunner commits one transaction per event and needs subscribe(), which SQLite lacks;
this loop reads the log in pages (`Record.read_log`), folds each page with the pure `LogState`, and writes the
changed facts, the refreshed week documents and the tracking position in one transaction per page.
An undecodable event stops it: everything before it is applied, and `UndecodableEventError` names its position.

Methods for the site and workers (all synchronous; call them from a worker thread in async code):
- `migrate()` creates or updates the tables (idempotent; `catch_up` calls it too).
- `catch_up(progress=None) -> int` applies new events; `rebuild(progress=None) -> int` starts from empty.
  `progress(position, head)` is called after each page.
- `position() -> int`: the last log position applied (a cache key for rendered pages).
- `weeks() -> list[WeekInfo]`: weeks with public results, newest first, with publication status.
- `ranking_bytes(week, as_published=False)`, `matrix_bytes(week, as_published=False) -> bytes`: canonical JSON.
  As published: the first publication's bytes (recomputed by replay when not stored). Raises UnknownWeekError
  or NotPublishedError.
- `week_documents(week) -> WeekDocuments` (as corrected), `publications(week) -> list[PublicationFact]`.
- `corrections() -> bytes`, `runs_index(week=None, model=None, station=None) -> bytes`, `station_rates() -> bytes`,
  `run(run_id) -> RunFact` (public runs only; raises UnknownRunError).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from adapters.readmodel_tables import Tables
from adapters.settings import Settings
from adapters.sqldb import SqlDb
from domain.facts import PublicationFact, RunFact
from domain.projections import logs
from domain.projections.documents import WeekDocuments
from domain.projections.fold import LogState
from domain.publishing import NotPublishedError, UnknownWeekError, documents_as_published
from domain.record import Record, UndecodableEventError, UnknownRunError
from domain.schema import Envelope

Progress = Callable[[int, int], None]


class WeekInfo(msgspec.Struct, frozen=True):
    week: str
    course_version: str | None
    position: int
    publications: int


class ReadModels:
    def __init__(self, settings: Settings, record: Record, page_size: int = 5000) -> None:
        self.record, self.page_size = record, page_size
        self.db = SqlDb(settings)
        self._migrated = False

    def migrate(self) -> list[str]:
        applied = self.db.migrate()
        self._migrated = True
        return applied

    # --- the projection loop ----------------------------------------------------------------------------

    def catch_up(self, progress: Progress | None = None) -> int:
        if not self._migrated:
            self.migrate()
        after, head = self.position(), self.record.head_position()
        while True:
            try:
                envelopes = self.record.read_log(after=after, limit=self.page_size)
            except UndecodableEventError as error:
                before_bad = self.record.read_log(after=after, limit=self.page_size, stop=error.position - 1)
                self._apply_page(after, before_bad)
                raise
            if not envelopes:
                return after
            if not self._apply_page(after, envelopes):
                after = self.position()  # another projector applied it first: go on from where it got
                continue
            after = envelopes[-1].position
            if progress:
                progress(after, max(head, after))

    def rebuild(self, progress: Progress | None = None) -> int:
        """Empty every read model and apply the whole log again."""
        self.migrate()
        with self.db.transaction() as tx:
            Tables(tx).clear()
        return self.catch_up(progress)

    def _apply_page(self, after: int, envelopes: list[Envelope]) -> bool:
        """Apply a page read after `after` in one transaction; False when the read models moved meanwhile."""
        if not envelopes:
            return True
        with self.db.transaction() as tx:
            tables = Tables(tx)
            if tables.lock_tracking() != after:
                return False
            state = LogState()
            tables.load_working_set(state, envelopes)
            touched = state.fold(envelopes)
            tables.write(state)
            tables.refresh_weeks(touched)
        return True

    # --- reads --------------------------------------------------------------------------------------------

    def position(self) -> int:
        if not self._migrated:
            self.migrate()
        with self.db.transaction() as tx:
            return Tables(tx).tracking()[0]

    def weeks(self) -> list[WeekInfo]:
        with self.db.transaction() as tx:
            rows = tx.fetchall(
                "SELECT w.week, w.course_version, w.position, "
                "(SELECT COUNT(*) FROM rm_publications p WHERE p.week = w.week) FROM rm_weeks w "
                "WHERE w.ranking IS NOT NULL ORDER BY w.week DESC"
            )
        return [WeekInfo(str(r[0]), r[1], int(r[2]), int(r[3])) for r in rows]

    def week_documents(self, week: str) -> WeekDocuments:
        with self.db.transaction() as tx:
            row = tx.fetchone(
                "SELECT course_version, position, ranking, matrix FROM rm_weeks WHERE week = ?", (week,)
            )
        if row is None or row[2] is None:
            raise UnknownWeekError(week)
        return WeekDocuments(
            week=week, course_version=row[0], position=int(row[1]), ranking=row[2].encode(),
            matrix=row[3].encode(),
        )

    def publications(self, week: str) -> list[PublicationFact]:
        with self.db.transaction() as tx:
            return Tables(tx).publications(week)

    def published_documents(self, week: str, index: int = 0) -> WeekDocuments:
        """A publication's documents (the first by default), replayed from the log when not stored."""
        pubs = self.publications(week)
        if not pubs:
            self.week_documents(week)  # an unknown week says so rather than "not published"
            raise NotPublishedError(week)
        pub = pubs[index]
        with self.db.transaction() as tx:
            row = tx.fetchone(
                "SELECT ranking, matrix FROM rm_published_documents WHERE week = ? AND position = ?",
                (week, pub.position),
            )
        if row is not None:
            return WeekDocuments(
                week=week, course_version=pub.course_version, position=pub.position, ranking=row[0].encode(),
                matrix=row[1].encode(),
            )
        docs = documents_as_published(self.record.read_log, pub)
        self.store_published(docs)
        return docs

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

    def corrections(self) -> bytes:
        with self.db.transaction() as tx:
            tables = Tables(tx)
            corrections = tables.corrections()
            runs = tables.runs_by_id([c.run_id for c in corrections if c.run_id])
        return logs.corrections_log(corrections, runs)

    def runs_index(self, week: str | None = None, model: str | None = None, station: str | None = None) -> bytes:
        with self.db.transaction() as tx:
            return logs.runs_index(Tables(tx).public_runs(week=week, model=model, station=station))

    def run(self, run_id: str) -> RunFact:
        with self.db.transaction() as tx:
            found = Tables(tx).runs_by_id([str(run_id)])
        run = found.get(str(run_id))
        if run is None or run.org is not None:
            raise UnknownRunError(run_id)
        return run

    def station_rates(self) -> bytes:
        with self.db.transaction() as tx:
            rows = tx.fetchall("SELECT matrix FROM rm_weeks WHERE matrix IS NOT NULL")
        return logs.station_rates(msgspec.json.decode(r[0]) for r in rows)
