"""The read models: a projection loop of our own that keeps the site's tables up to date with the log, and the
tables themselves (`Tables`: what a page of events needs loaded, what it changed written, the touched weeks'
documents made again), in one module because they are one concern: the log folded into week documents.
What the pages and commands read from the tables besides a week's documents (the week list and publications,
runs, corrections, organisations) is the base class, `ReadModelQueries` in adapters/readmodel_queries.py: one
object for callers, another module because the path from a step to the Matrix does not cross it.

The library's ProjectionRunner commits one transaction per event and needs subscribe(), which SQLite lacks;
this loop reads the log in pages (`Record.read_log`, step payloads skimmed), folds each page with the pure
`LogState`, and writes the changed facts and the tracking position; up to `pages_per_transaction` pages share
one transaction, and the weeks they touched are refreshed once at its end. A rebuild (and a catch-up into empty
read models) folds the whole log in memory and writes every table once, in one transaction.
An undecodable event stops it: everything before it is applied, and `UndecodableEventError` names its position.

Methods of its own (all synchronous; call them from a worker thread in async code):
- `migrate()` creates or updates the tables (idempotent; `catch_up` calls it too).
- `catch_up(progress=None) -> int` applies new events; `rebuild(progress=None) -> int` starts from empty.
  `progress(position, head)` is called after each page.
- `position() -> int`: the last log position applied (a cache key for rendered pages).
- `week_documents(week) -> WeekDocuments`: as corrected, what the Matrix and ranking pages show; raises
  UnknownWeekError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import msgspec

from adapters.readmodel_queries import ReadModelQueries, visibility
from adapters.settings import Settings
from adapters.sqldb import SqlDb, Tx
from domain.eventlog.record import Record, UndecodableEventError
from domain.eventlog.schema import Envelope
from domain.projections.documents import MATRIX_FORMAT, NoCourseError, WeekDocuments, week_documents
from domain.projections.facts import CorrectionFact, OrganisationFact, ReleaseFact, RunFact, WeekFacts
from domain.projections.fold import ALL, SKIMMED, LogState
from domain.projections.repeats import repeats_bytes as repeats_document_bytes
from domain.week.publishing import UnknownWeekError
from domain.week.weeks import WeekError

Progress = Callable[[int, int], None]
_TABLES = (
    "rm_tracking", "rm_runs", "rm_corrections", "rm_releases", "rm_labels", "rm_week_ids", "rm_weeks",
    "rm_publications", "rm_published_documents", "rm_organisations",
)
_CHUNK = 500
_CURRENT_MATRIX = f'"format":"{MATRIX_FORMAT}"'
"""How a Matrix of the current documents format names itself (canonical JSON)."""
_encode = msgspec.json.Encoder().encode
_run = msgspec.json.Decoder(RunFact).decode
_correction = msgspec.json.Decoder(CorrectionFact).decode
_release = msgspec.json.Decoder(ReleaseFact).decode
_organisation = msgspec.json.Decoder(OrganisationFact).decode


class ReadModels(ReadModelQueries):
    def __init__(
        self, settings: Settings, record: Record, page_size: int = 5000, pages_per_transaction: int = 20
    ) -> None:
        self.record, self.page_size, self.pages_per_transaction = record, page_size, pages_per_transaction
        self.db = SqlDb(settings)
        self._migrated = False
        self._replayed = {}

    def migrate(self) -> list[str]:
        applied = self.db.migrate()
        self._migrated = True
        return applied

    @contextmanager
    def tables(self) -> Iterator[Tables]:
        """The read models' tables inside one transaction."""
        with self.db.transaction() as tx:
            yield Tables(tx)

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
        with self.tables() as tables:
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
        with self.tables() as tables:
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

    # --- reading back (the pages' other reads: ReadModelQueries) ---------------------------------------

    def position(self) -> int:
        if not self._migrated:
            self.migrate()
        with self.tables() as tables:
            return tables.tracking()[0]

    def week_documents(self, week: str) -> WeekDocuments:
        row = self._week_row(week)
        if row is not None and row[3] is not None and _CURRENT_MATRIX not in row[3]:
            # made by a version writing an earlier documents format (rm_weeks keeps a week's until it changes):
            # made again now, so the pages and a new publication get the current format, as its hashes will say
            with self.tables() as tables:
                tables.lock_tracking()  # after any projector's transaction, on the facts it committed
                tables.refresh_weeks({week})
            row = self._week_row(week)
        if row is None or row[2] is None:
            raise UnknownWeekError(week)
        return WeekDocuments(
            week=week, course_version=row[0], position=int(row[1]), ranking=row[2].encode(),
            matrix=row[3].encode(),
        )

    def _week_row(self, week: str) -> tuple[str, ...] | None:
        with self.db.transaction() as tx:
            row = tx.fetchone("SELECT course_version, position, ranking, matrix FROM rm_weeks WHERE week = ?", (week,))
        return tuple(row) if row is not None else None


# --- the tables inside one transaction ------------------------------------------------------------------------
# Load the facts a page of events needs, write what it changed, and refresh the documents of the weeks it touched.
# Facts are stored as msgspec JSON in a `fact` column next to the columns they are looked up by.


def _documents_row(facts: WeekFacts) -> tuple[str | None, str | None, str | None, str | None]:
    """(course_version, ranking, matrix, repeats) of a week; all None when no course is released or the week
    is malformed."""
    try:
        docs = week_documents(facts)
        repeats = repeats_document_bytes(facts)
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
            [(r.run_id, r.week, r.model, r.station, visibility(r), _encode(r).decode())
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
            (r.run_id, r.week, r.model, r.station, visibility(r), _encode(r).decode())
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
            runs=self.public_runs(week),
            corrections=[_correction(r[0]) for r in self.tx.fetchall(
                "SELECT fact FROM rm_corrections WHERE week = ? ORDER BY position", (week,))],
            releases=[_release(r[0]) for r in self.tx.fetchall("SELECT fact FROM rm_releases ORDER BY version")],
            labels={str(r[0]): str(r[1]) for r in self.tx.fetchall("SELECT model, label FROM rm_labels")},
            position=max(int(row[0]) if row else 0, self.tracking()[1]),
        )

    def public_runs(self, week: str) -> list[RunFact]:
        """The week's runs that count (never a private test, consented or not)."""
        rows = self.tx.fetchall("SELECT fact FROM rm_runs WHERE week = ? AND public = 1 ORDER BY run_id", (week,))
        return [_run(r[0]) for r in rows]
