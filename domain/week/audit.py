"""The audit file of a published week (docs/audit-format.md): export from the log, verify from the file alone.

Every line is canonical JSON carrying `prev` (the previous line's sha256; 64 zeros on the header) and `sha256`
(of the line's canonical JSON without its own `sha256`), so one changed byte breaks the chain at that line.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from domain.eventlog.schema import Envelope, payload_decoder
from domain.projections.canonical import canonical_struct_bytes, sha256_hex
from domain.projections.documents import UnknownFormatError, WeekDocuments, counting_rule, week_documents
from domain.projections.facts import PublicationFact
from domain.projections.fold import ALL, SKIMMED, LogState
from domain.projections.scoring import COUNT_BY_START
from domain.week.weeks import WeekError, parse_week

if TYPE_CHECKING:  # publishing records a publication's events_sha256 with this module's functions
    from domain.week.publishing import LogReader

_T = TypeVar("_T")

FORMAT, VERSION = "canitbuy-audit", 1
GENESIS = "0" * 64
STARTED = "Run.Started"


class AuditError(ValueError):
    """The file does not verify; the message names the line (1 = the header) or the hash that differs."""


class Header(msgspec.Struct, frozen=True, kw_only=True):
    format: str
    version: int
    week: str
    position: int
    ranking_sha256: str
    matrix_sha256: str
    course_version: str
    events: int
    prev: str
    sha256: str
    provisional: bool = False
    """The publication was made while the week was in progress; the week's final publication supersedes it."""
    citation: str | None = None
    """How to cite the week, as the ranking and Matrix say (absent in older files)."""
    documents_format: int = 1
    """The format the ranking and Matrix were published in, and are recomputed in (absent, 1, in older files)."""


class Line(msgspec.Struct, frozen=True, kw_only=True):
    position: int
    type: str
    originator_id: str
    originator_version: int
    time: datetime
    payload: msgspec.Raw
    prev: str
    sha256: str


def _sealed(content: dict[str, Any], prev: str) -> tuple[bytes, str]:
    content = {**content, "prev": prev}
    digest = sha256_hex(canonical_struct_bytes(content))
    return canonical_struct_bytes({**content, "sha256": digest}), digest


def _runs_counting_for(read_log: LogReader, week: str, stop: int, page: int) -> set[str]:
    """Runs that count for the week at `stop` but were scheduled for another (they started in this one)."""
    state, after = LogState(), 0
    while envelopes := read_log(after=after, limit=page, stop=stop, skim=SKIMMED):
        state.fold(envelopes)
        after = envelopes[-1].position
    return {r.run_id for r in state.runs.values() if r.week == week and r.scheduled_week not in (None, week)}


def week_events(read_log: LogReader, week: str, stop: int, page: int = 5000) -> Iterator[Envelope]:
    """The events up to `stop` that a week's documents depend on (what the fold says can change them), the
    Run.Scheduled of every run that moved into the week when it started there (the fold needs it to know the run),
    and the Run.Started of each public run of the week: documents format 4 counts by it (`export_lines` leaves
    them out of files of earlier formats, as those files always did)."""
    moved = _runs_counting_for(read_log, week, stop, page)
    state, after = LogState(), 0
    # skimmed events change no week (the fold says so), so none of them is exported
    while envelopes := read_log(after=after, limit=page, stop=stop, skim=SKIMMED):
        for e in envelopes:
            affected = state.apply(e)
            if (week in affected or ALL in affected or (e.name == "Run.Scheduled" and e.originator_id in moved)
                    or (e.name == STARTED and _public_run_of(state, e.originator_id, week))):
                yield e
        after = envelopes[-1].position


def _public_run_of(state: LogState, run_id: str, week: str) -> bool:
    run = state.runs.get(run_id)
    return run is not None and run.week == week and run.org is None


def _as_the_format_selects(events: Iterable[Envelope], week: str, documents_format: int) -> list[Envelope]:
    """The events of `week_events` a file of the publication's format holds: before format 4, a Run.Started only
    when the fold says it changes the week (it moved a run into it)."""
    if counting_rule(documents_format) == COUNT_BY_START:
        return list(events)
    state, kept = LogState(), []
    for e in events:
        if week in state.apply(e) or e.name != STARTED:
            kept.append(e)
    return kept


def published_events(read_log: LogReader, week: str, position: int, documents_format: int) -> list[Envelope]:
    """The event lines of the audit file of a publication of `week` at `position` in `documents_format`, the
    events its `events_sha256` covers."""
    return _as_the_format_selects(week_events(read_log, week, position), week, documents_format)


def meaning(value: Any) -> Any:
    """A decoded payload as plain values, every struct field that holds its default left out at every depth: an
    event recorded before a field with a default was added to its type reads as it did when it was published, so
    its sha256 holds however the schema grows."""
    if isinstance(value, msgspec.Struct):
        kept = {f.encode_name: meaning(getattr(value, f.name)) for f in msgspec.structs.fields(value)
                if not _at_default(getattr(value, f.name), f.default, f.default_factory, msgspec.NODEFAULT)}
        if (tag_field := value.__struct_config__.tag_field) is not None:
            kept[tag_field] = value.__struct_config__.tag
        return kept
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: meaning(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not _at_default(getattr(value, f.name), f.default, f.default_factory, dataclasses.MISSING)}
    if isinstance(value, dict):
        return {key: meaning(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [meaning(item) for item in value]
    return value


def _at_default(value: Any, default: Any, factory: Any, none: Any) -> bool:
    if default is none and factory is none:
        return False
    default = factory() if default is none else default
    return type(value) is type(default) and bool(value == default)


def events_sha256(events: Iterable[Envelope]) -> str:
    """The sha256 of events in log order: for each, the canonical JSON of its `position`, `type`,
    `originator_id`, `originator_version` and `payload` (as `meaning` gives it), then a newline."""
    digest = hashlib.sha256()
    for e in events:
        digest.update(_digested(e))
    return digest.hexdigest()


def _digested(e: Envelope) -> bytes:
    return canonical_struct_bytes({
        "position": e.position, "type": e.name, "originator_id": e.originator_id,
        "originator_version": e.originator_version, "payload": meaning(e.payload),
    }) + b"\n"


def export_lines(events: Iterable[Envelope], publication: PublicationFact) -> Iterator[bytes]:
    """The file's lines (without newlines): the header, then one event a line."""
    events = _as_the_format_selects(events, publication.week, publication.documents_format)
    state = LogState()
    for e in events:
        state.apply(e)
    header = {
        "format": FORMAT, "version": VERSION, "week": publication.week, "position": publication.position,
        "ranking_sha256": publication.ranking_sha256, "matrix_sha256": publication.matrix_sha256,
        "course_version": publication.course_version, "events": len(events),
    }
    if publication.documents_format != 1:  # absent from format-1 files, so they export as they always did
        docs = week_documents(state.week_facts(publication.week), publication.documents_format)
        header |= {"documents_format": publication.documents_format, "citation": _cited(docs)}
    if publication.provisional:  # absent from final publications, so their files are as they always were
        header["provisional"] = True
    line, prev = _sealed(header, GENESIS)
    yield line
    for e in events:
        content = {
            "position": e.position, "type": e.name, "originator_id": e.originator_id,
            "originator_version": e.originator_version, "time": e.at,
            "payload": msgspec.json.decode(canonical_struct_bytes(e.payload)),
        }
        line, prev = _sealed(content, prev)
        yield line


def _check_line(number: int, raw: bytes, prev: str) -> dict[str, Any]:
    try:
        content = msgspec.json.decode(raw)
    except msgspec.DecodeError as error:
        raise AuditError(f"line {number} is not JSON: {error}") from None
    if not isinstance(content, dict) or canonical_struct_bytes(content) != raw:
        raise AuditError(f"line {number} is not in canonical form (changed or reformatted)")
    claimed = content.pop("sha256", None)
    if content.get("prev") != prev:
        raise AuditError(f"line {number} does not follow line {number - 1}: the hash chain is broken")
    if claimed != sha256_hex(canonical_struct_bytes(content)):
        raise AuditError(f"line {number} was changed: its sha256 does not match its content")
    return content


def _typed(number: int, raw: bytes, kind: type[_T]) -> _T:
    """A line read as `kind`; a field of the wrong type or missing is named with its path, e.g. `$.position`."""
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as error:
        raise AuditError(f"line {number}: {_at(error, '$')}") from None


def _at(error: msgspec.ValidationError, root: str) -> str:
    """msgspec's message with its path read from `root` (a payload's `$` is the line's `$.payload`)."""
    message = str(error)
    if root != "$":
        message = message.replace("at `$", f"at `{root}")
    if " - at `" not in message:
        return f"{message} - at `{root}`"
    return message


class Checked(msgspec.Struct, frozen=True, kw_only=True):
    """What a file that agrees with itself recomputes to: compare it with the publication (domain/week/anchors.py)."""

    header: Header
    documents: WeekDocuments
    ranking_sha256: str
    matrix_sha256: str
    events_sha256: str


def check_lines(lines: Iterable[bytes]) -> Checked:
    """Check the file's chain and recompute the week's documents and events sha256 from it alone; raise
    AuditError unless it agrees with itself (the documents hash as its header says). Values from outside the file
    show whether it is what was published (domain/week/anchors.py)."""
    it = iter(enumerate(lines, start=1))
    try:
        _, first = next(it)
    except StopIteration:
        raise AuditError("the file is empty") from None
    _check_line(1, first, GENESIS)
    header = _typed(1, first, Header)
    if (header.format, header.version) != (FORMAT, VERSION):
        raise AuditError(f"line 1: not a {FORMAT} v{VERSION} file")
    try:
        parse_week(header.week)
    except WeekError as error:
        raise AuditError(f"line 1: week: {error}") from None
    state, prev, count, digest = LogState(), header.sha256, 0, hashlib.sha256()
    for number, raw in it:
        _check_line(number, raw, prev)
        line = _typed(number, raw, Line)
        if line.position <= state.position or line.position > header.position:
            raise AuditError(f"line {number}: position {line.position} is out of order")
        try:
            payload = payload_decoder(line.type).decode(line.payload)
            event = Envelope(line.position, line.originator_id, line.originator_version, line.type, payload)
            state.apply(event)
        except msgspec.ValidationError as error:
            raise AuditError(f"line {number}: {_at(error, '$.payload')}") from None
        except (LookupError, AttributeError, msgspec.DecodeError) as error:
            raise AuditError(f"line {number}: the event cannot be read: {error}") from None
        if line.time != event.at:
            raise AuditError(f"line {number}: its time is not its payload's timestamp")
        prev, count = line.sha256, count + 1
        digest.update(_digested(event))
    if count != header.events:
        raise AuditError(f"the file has {count} events but its header says {header.events}")
    try:
        docs = week_documents(state.week_facts(header.week), header.documents_format)
    except UnknownFormatError as error:
        raise AuditError(f"line 1: {error}") from None
    if header.citation is not None and header.citation != _cited(docs):
        raise AuditError(f"line 1: the citation {header.citation!r} is not the week's ({_cited(docs)!r})")
    checked = Checked(header=header, documents=docs, ranking_sha256=sha256_hex(docs.ranking),
                      matrix_sha256=sha256_hex(docs.matrix), events_sha256=digest.hexdigest())
    for name, claimed, got in (
        ("ranking", header.ranking_sha256, checked.ranking_sha256),
        ("matrix", header.matrix_sha256, checked.matrix_sha256),
    ):
        if got != claimed:
            raise AuditError(f"the {name} sha256 differs from the file's header: the header says {claimed}, "
                             f"recomputed {got}")
    return checked


def verify_lines(lines: Iterable[bytes]) -> WeekDocuments:
    """The week's documents recomputed from a file that agrees with itself (`check_lines`)."""
    return check_lines(lines).documents


def _cited(docs: WeekDocuments) -> str:
    cited: str = msgspec.json.decode(docs.ranking)["citation"]
    return cited


def is_provisional(first_line: bytes) -> bool:
    """Whether an audit file's header says its publication was provisional."""
    return msgspec.json.decode(first_line, type=Header).provisional
