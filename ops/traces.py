"""Kept traces made their run's own: `canitbuy traces clean`.

Until 3 December 2026 a run's Playwright trace was kept as Playwright wrote it, with `trace.stacks`: the call
stacks of every API call on the browser's connection, so of every run sharing the browser with it, possibly an
organisation's private test (the kinds of its actions, the worker's file paths; `adapters/browser/trace_file.py`).
Runs since keep their trace without it. This walk finds the traces the runs offer now that still hold the entry,
puts each one back into the blob store without it, and records Run.TraceCleaned on the run, so its recording
names the cleaned trace and never the old one again (the blob store never rewrites a blob: the old one stays in
it, named only by the run's earlier event). A trace that cannot be read as a zip cannot be cleaned: the run is
recorded as offering no trace. Running it again finds nothing more to do.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from adapters.blobs import Blobs
from adapters.browser.trace_file import CALL_STACKS, drop_call_stacks
from domain.agent.runs import RunError
from domain.eventlog.record import Record
from domain.projections.fold import MEDIA_EVENTS, SKIMMED


@dataclass
class Cleaning:
    """What one walk found and did."""

    offered: int = 0
    """Runs offering a trace."""
    cleaned: list[str] = field(default_factory=list)
    """Runs whose trace was replaced by one without the call stacks (or would be, on a dry run)."""
    withheld: list[str] = field(default_factory=list)
    """Runs whose trace is not a readable zip: recorded as offering none."""
    missing: list[str] = field(default_factory=list)
    """Runs whose trace is not in the blob store (`canitbuy check` says more); left as they are."""
    changed: list[str] = field(default_factory=list)
    """Runs that recorded something about their trace while the walk ran; left for the next walk."""

    @property
    def clean_already(self) -> int:
        return self.offered - len(self.cleaned) - len(self.withheld) - len(self.missing) - len(self.changed)


def offered_traces(record: Record) -> dict[str, str]:
    """Run id to the sha256 of the trace it offers now, in the order the runs kept them."""
    offered: dict[str, str] = {}
    after = 0
    while page := record.read_log(after, skim=SKIMMED):  # the steps (most of the log) not decoded
        after = page[-1].position
        for envelope in page:
            if envelope.name not in MEDIA_EVENTS:
                continue
            trace = envelope.payload.trace
            if trace:
                offered[envelope.originator_id] = trace
            else:
                offered.pop(envelope.originator_id, None)
    return offered


def holds_call_stacks(data: bytes) -> bool:
    """Whether the trace holds `trace.stacks`; `zipfile.BadZipFile` when it is not a readable zip."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return CALL_STACKS in archive.namelist()


def clean_traces(record: Record, blobs: Blobs, *, dry_run: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> Cleaning:
    """Walk every trace the runs offer; clean those that hold the call stacks (`dry_run`: only say which)."""
    offered = offered_traces(record)
    found = Cleaning(offered=len(offered))
    with tempfile.TemporaryDirectory(prefix="canitbuy-traces-") as folder:
        for done, (run_id, digest) in enumerate(offered.items(), 1):
            if progress is not None:
                progress(done, len(offered))
            try:
                data = blobs.get(digest)
            except KeyError:  # not in the store
                found.missing.append(run_id)
                continue
            try:
                stacks: bool | None = holds_call_stacks(data)
            except zipfile.BadZipFile:
                stacks = None  # not a zip Playwright's viewer or we can read: its call stacks cannot come out
            if stacks is False:
                continue
            into = found.cleaned if stacks else found.withheld
            if not dry_run:
                trace, size = _cleaned(blobs, Path(folder), data) if stacks else (None, 0)
                if trace is None:
                    into = found.withheld
                if not _record(record, run_id, digest, trace, size):
                    into = found.changed
            into.append(run_id)
    return found


def _cleaned(blobs: Blobs, folder: Path, data: bytes) -> tuple[str | None, int]:
    """The trace without `trace.stacks`, put into the blob store: its sha256 and size (None, 0 when an entry of it
    cannot be read to write it again)."""
    path = folder / "trace.zip"
    path.write_bytes(data)
    try:
        drop_call_stacks(path)
    except (zipfile.BadZipFile, zlib.error, EOFError):  # an entry that does not decompress (a damaged zip)
        path.unlink(missing_ok=True)
        return None, 0
    size = path.stat().st_size
    return blobs.put_file(path), size


def _record(record: Record, run_id: str, replaced: str, trace: str | None, size: int) -> bool:
    """Record Run.TraceCleaned; False when the run no longer offers `replaced` (another walk got there first)."""
    run = record.get_run(UUID(run_id))
    try:
        run.clean_trace(replaced=replaced, trace=trace, trace_bytes=size, at=record.clock())
    except RunError:
        return False
    try:
        record.save(run)
    except IntegrityError:  # the run recorded something meanwhile
        return False
    return True
