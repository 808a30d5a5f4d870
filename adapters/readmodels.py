"""The read models: a projection loop of our own that keeps the site's tables up to date with the log.

The library's ProjectionRunner commits one transaction per event and needs subscribe(), which SQLite lacks;
this loop reads the log in pages (`Record.read_log`, step payloads skimmed), folds each page with the pure
`LogState`, and writes the changed facts and the tracking position; up to `pages_per_transaction` pages share
one transaction, and the weeks they touched are refreshed once at its end. A rebuild (and a catch-up into empty
read models) folds the whole log in memory and writes every table once, in one transaction.
An undecodable event stops it: everything before it is applied, and `UndecodableEventError` names its position.

Methods for the site and workers (all synchronous; call them from a worker thread in async code):
- `migrate()` creates or updates the tables (idempotent; `catch_up` calls it too).
- `catch_up(progress=None) -> int` applies new events; `rebuild(progress=None) -> int` starts from empty.
  `progress(position, head)` is called after each page.
- `position() -> int`: the last log position applied (a cache key for rendered pages).
- `weeks() -> list[WeekInfo]`: weeks with public results, newest first, with publication status.
- `ranking_bytes(week, as_published=False)`, `matrix_bytes(week, as_published=False) -> bytes`: canonical JSON.
  As published: the standing publication's bytes (recomputed by replay when not stored). Raises UnknownWeekError
  or NotPublishedError.
- `repeats_bytes(week) -> bytes`: the week's repeat-run document (docs/schemas/repeats.json), as corrected; it is
  not part of a publication. Raises UnknownWeekError.
- `week_documents(week) -> WeekDocuments` (as corrected), `publications(week) -> list[PublicationFact]`.
- `corrections() -> bytes`, `runs_index(week=None, model=None, station=None) -> bytes`, `station_rates() -> bytes`,
  `run(run_id) -> RunFact` (public runs and consented private tests; raises UnknownRunError).
- `private_runs(org=None)`, `organisations()`: private tests and organisations, for members and staff only.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from adapters.readmodel_tables import Tables
from adapters.settings import Settings
from adapters.sqldb import SqlDb
from domain.eventlog.record import Record, UndecodableEventError, UnknownRunError
from domain.eventlog.schema import Envelope
from domain.projections import logs
from domain.projections.documents import Matrix, WeekDocuments
from domain.projections.facts import OrganisationFact, PublicationFact, RunFact
from domain.projections.fold import SKIMMED, LogState
from domain.projections.repeats import repeats_bytes as repeats_document_bytes
from domain.week.publications import standing
from domain.week.publishing import NotPublishedError, UnknownWeekError, documents_as_published

Progress = Callable[[int, int], None]
_matrix = msgspec.json.Decoder(Matrix).decode


class WeekInfo(msgspec.Struct, frozen=True):
    week: str
    course_version: str | None
    position: int
    publications: int
    provisional: bool = False
    """Published only provisionally so far (the week was in progress); its final publication supersedes it."""


class ReadModels:
    def __init__(
        self, settings: Settings, record: Record, page_size: int = 5000, pages_per_transaction: int = 20
    ) -> None:
        self.record, self.page_size, self.pages_per_transaction = record, page_size, pages_per_transaction
        self.db = SqlDb(settings)
        self._migrated = False

    def migrate(self) -> list[str]:
        applied = self.db.migrate()
        self._migrated = True
        return applied

    # --- the projection loop ----------------------------------------------------------------------------

    def catch_up(self, progress: Progress | None = None) -> int:
        """Apply the events not yet applied; from an empty read model, the whole log at once (as rebuild)."""
        if not self._migrated:
            self.migrate()
        after, head = self.position(), self.record.head_position()
        if after == 0 and head > 0:
            loaded = self._load_all(progress, only_if_empty=True)
            if loaded is not None:
                return loaded
            after = self.position()
        while True:
            applied = self._apply_pages(after, head, progress)
            if applied is None:
                after = self.position()  # another projector applied it first: go on from where it got
                continue
            after, done = applied
            if done:
                return after

    def rebuild(self, progress: Progress | None = None) -> int:
        """Empty every read model and apply the whole log again, in one transaction."""
        self.migrate()
        loaded = self._load_all(progress, only_if_empty=False)
        assert loaded is not None
        return loaded

    def _read(self, after: int) -> tuple[list[Envelope], UndecodableEventError | None]:
        """The next page, or the part of it before an undecodable event together with its error."""
        try:
            return self.record.read_log(after=after, limit=self.page_size, skim=SKIMMED), None
        except UndecodableEventError as error:
            before_bad = self.record.read_log(
                after=after, limit=self.page_size, stop=error.position - 1, skim=SKIMMED
            )
            return before_bad, error

    def _load_all(self, progress: Progress | None, *, only_if_empty: bool) -> int | None:
        """Fold the whole log in memory and write every table once (COPY on PostgreSQL), each week's documents
        computed once. None when `only_if_empty` and another projector got there first."""
        head, error = self.record.head_position(), None
        with self.db.transaction() as tx:
            tables = Tables(tx)
            if tables.lock_tracking() != 0 and only_if_empty:
                return None
            tables.clear()
            state, after = LogState(), 0
            while error is None:
                envelopes, error = self._read(after)
                if not envelopes:
                    break
                state.fold(envelopes)
                after = envelopes[-1].position
                if progress:
                    progress(after, max(head, after))
            tables.write_all(state)
        if error is not None:  # everything before it is applied and committed
            raise error
        return state.position

    def _apply_pages(self, after: int, head: int, progress: Progress | None) -> tuple[int, bool] | None:
        """Apply up to `pages_per_transaction` pages read after `after` in one transaction, refreshing the
        touched weeks once at its end. (position reached, log exhausted), or None when the read models moved
        meanwhile."""
        touched: set[str] = set()
        error, done = None, False
        with self.db.transaction() as tx:
            tables = Tables(tx)
            if tables.lock_tracking() != after:
                return None
            for _ in range(self.pages_per_transaction):
                envelopes, error = self._read(after)
                if not envelopes:
                    done = True
                    break
                state = LogState()
                tables.load_working_set(state, envelopes)
                touched |= state.fold(envelopes)
                tables.write(state)
                after = envelopes[-1].position
                if progress:
                    progress(after, max(head, after))
                if error is not None:
                    break
            tables.refresh_weeks(touched)
        if error is not None:  # everything before it is applied and committed
            raise error
        return after, done

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
            final = {str(r[0]) for r in tx.fetchall("SELECT week, fact FROM rm_publications")
                     if not msgspec.json.decode(r[1], type=PublicationFact).provisional}
        return [WeekInfo(str(r[0]), r[1], int(r[2]), int(r[3]), provisional=bool(r[3]) and str(r[0]) not in final)
                for r in rows]

    def running_runs(self, week: str) -> int:
        with self.db.transaction() as tx:
            return sum(1 for r in Tables(tx).public_runs(week=week) if r.status == "running")

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

    def repeats_bytes(self, week: str) -> bytes:
        """The week's repeat-run document (canonical JSON, as corrected); raises UnknownWeekError."""
        with self.db.transaction() as tx:
            row = tx.fetchone("SELECT ranking, repeats FROM rm_weeks WHERE week = ?", (week,))
            if row is None or row[0] is None:
                raise UnknownWeekError(week)
            if row[1] is not None:
                return str(row[1]).encode()
            return repeats_document_bytes(Tables(tx).week_facts(week))  # weeks refreshed before 0011

    def corrections(self) -> bytes:
        with self.db.transaction() as tx:
            tables = Tables(tx)
            corrections = tables.corrections()
            runs = tables.runs_by_id([c.run_id for c in corrections if c.run_id])
        return logs.corrections_log(corrections, runs)

    def runs_index(self, week: str | None = None, model: str | None = None, station: str | None = None) -> bytes:
        with self.db.transaction() as tx:
            return logs.runs_index(Tables(tx).shown_runs(week=week, model=model, station=station))

    def run(self, run_id: str) -> RunFact:
        with self.db.transaction() as tx:
            found = Tables(tx).runs_by_id([str(run_id)])
        run = found.get(str(run_id))
        if run is None or not logs.shown(run):
            raise UnknownRunError(run_id)
        return run

    def private_runs(self, org: str | None = None) -> list[RunFact]:
        """Private tests, consented or not (every organisation's when `org` is None): for members and staff."""
        with self.db.transaction() as tx:
            return Tables(tx).private_runs(org)

    def organisations(self) -> list[OrganisationFact]:
        with self.db.transaction() as tx:
            return Tables(tx).organisations()

    def station_rates(self) -> bytes:
        with self.db.transaction() as tx:
            rows = tx.fetchall("SELECT matrix FROM rm_weeks WHERE matrix IS NOT NULL")
        return logs.station_rates(_matrix(r[0]) for r in rows)
