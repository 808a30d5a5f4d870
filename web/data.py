"""The site's view of the read models: one catch-up at a time per process, and the week list kept in memory so
a cached page is found without touching the database.

The read models' projection loop must not run twice at once (a page applied twice would count steps twice),
so every catch-up of this process, including the one inside publishing a week, goes through one lock.
"""

from __future__ import annotations

import threading

import msgspec

from adapters.readmodel_queries import WeekInfo
from adapters.readmodels import ReadModels
from domain.courses.course import CourseSpec, load_course
from domain.projections.documents import Matrix, Ranking, WeekDocuments, in_stage_order, week_documents
from domain.projections.facts import PublicationFact
from domain.week.publications import standing
from domain.week.publishing import NotPublishedError, UnknownWeekError
from domain.week.weeks import WeekError, parse_week
from web.errors import BadRequest, NotFound


class WeekView(msgspec.Struct, frozen=True, kw_only=True):
    """A week's documents as the site shows them: as corrected, and as first published when it was."""

    week: str
    corrected: WeekDocuments
    published: WeekDocuments | None
    """The standing publication's documents (the first final one, else the newest provisional one); None while
    the week is unpublished."""
    latest_published: WeekDocuments | None
    provisional: bool = False
    """The standing publication is provisional (the week was in progress): newer runs, not corrections, may
    differ from it."""
    corrected_as_published: WeekDocuments | None = None
    """The week as corrected, in the standing publication's documents format when that is not the current one (a
    week published in an earlier format), to compare with it; None otherwise."""

    @property
    def changed_since_publication(self) -> bool:
        """Corrected after its (final) publication: the week as corrected, written in the publication's format,
        differs from it. A newer documents format alone is no correction."""
        now = self.corrected_as_published or self.corrected
        return self.published is not None and not self.provisional and (
            self.published.ranking != now.ranking or self.published.matrix != now.matrix
        )


class WeekDocs(msgspec.Struct, frozen=True, kw_only=True):
    """A week's documents decoded once per read-model position: what the ranking, Matrix and front pages read."""

    view: WeekView
    ranking: Ranking
    matrix: Matrix
    """Its stations in the course's stage order (control first) with its stages, as the document carries them from
    format 3 on: the order every page shows."""
    published_ranking: Ranking | None
    """The standing publication's ranking, when the week was published."""
    publications: list[PublicationFact]
    standing: PublicationFact | None
    course: CourseSpec


_ranking = msgspec.json.Decoder(Ranking).decode
_matrix = msgspec.json.Decoder(Matrix).decode


class SiteData:
    def __init__(self, readmodels: ReadModels) -> None:
        self.readmodels = readmodels
        self._lock = threading.Lock()
        self.position = -1
        """The read-model position last caught up to: decoded documents are kept for it."""
        self.weeks: list[WeekInfo] = []
        self._default: str | None = None
        self._default_of: list[WeekInfo] | None = None
        self._decoded: dict[str, WeekDocs] = {}
        self._decoded_at = -1

    # --- keeping up (called from worker threads) -------------------------------------------------------

    def catch_up(self) -> int:
        with self._lock:
            position = self.readmodels.catch_up()
            self.weeks = self.readmodels.weeks()
            self.position = position
            return position

    def listener(self, head: int) -> None:
        self.catch_up()

    # The WeekDocumentStore port of domain.week.publishing, with the catch-up behind our lock.
    def week_documents(self, week: str) -> WeekDocuments:
        return self.readmodels.week_documents(week)

    def store_published(self, documents: WeekDocuments) -> None:
        self.readmodels.store_published(documents)

    def running_runs(self, week: str) -> int:
        return self.readmodels.running_runs(week)

    # The WeekRuns port of domain.eventlog.handlers (issuing a correction), with `catch_up` above.
    def models_with_runs(self, week: str) -> list[str]:
        return self.readmodels.models_with_runs(week)

    def stations_with_runs(self, week: str) -> list[str]:
        return self.readmodels.stations_with_runs(week)

    # --- choosing a week (in memory) ------------------------------------------------------------------

    def known(self, week: str) -> WeekInfo | None:
        return next((w for w in self.weeks if w.week == week), None)

    def default_week(self) -> str | None:
        """The newest published week; before any publication, the newest week with results (kept with `weeks`:
        every request for a page without ?week= asks)."""
        if self._default_of is not self.weeks:
            published = [w.week for w in self.weeks if w.publications]
            self._default = published[0] if published else (self.weeks[0].week if self.weeks else None)
            self._default_of = self.weeks
        return self._default

    def pick_week(self, raw: str | None) -> str | None:
        """The week a request asks for: validated (400 when malformed), known (404), or the default."""
        if raw is None or raw == "":
            return self.default_week()
        try:
            week = parse_week(raw)
        except WeekError as error:
            raise BadRequest(f"week: {error}") from None
        if self.known(week) is None:
            raise NotFound(f"There are no public results for week {week}.")
        return week

    # --- reading (worker threads) ---------------------------------------------------------------------

    def week_view(self, week: str) -> WeekView:
        try:
            corrected = self.readmodels.week_documents(week)
        except UnknownWeekError:
            raise NotFound(f"There are no public results for week {week}.") from None
        info = self.known(week)
        published = latest = None
        if info is not None and info.publications:
            try:
                published = self.readmodels.published_documents(week)
                latest = self.readmodels.published_documents(week, -1)
            except NotPublishedError:
                published = latest = None
        provisional = bool(info and info.provisional)
        as_published = None
        if published is not None and published.documents_format != corrected.documents_format:
            as_published = week_documents(self.readmodels.week_facts(week), published.documents_format)
        return WeekView(week=week, corrected=corrected, published=published, latest_published=latest,
                        provisional=provisional, corrected_as_published=as_published)

    def documents(self, week: str) -> WeekDocs:
        """The week's documents as Structs, decoded once per read-model position."""
        if self._decoded_at != self.position:
            self._decoded, self._decoded_at = {}, self.position
        found = self._decoded.get(week)
        if found is None:
            found = self._decoded[week] = self._decode(week)
        return found

    def _decode(self, week: str) -> WeekDocs:
        view = self.week_view(week)
        ranking, matrix = _ranking(view.corrected.ranking), _matrix(view.corrected.matrix)
        publications = self.readmodels.publications(week)
        course = load_course(matrix.course_version)
        # A Matrix made before format 3 (rm_weeks keeps a week's until it changes) is put in stage order; a format-3
        # one comes back as it is.
        matrix = in_stage_order(matrix, course)
        return WeekDocs(
            view=view, ranking=ranking, matrix=matrix,
            published_ranking=_ranking(view.published.ranking) if view.published else None,
            publications=publications, standing=publications[standing(publications)] if publications else None,
            course=course,
        )
