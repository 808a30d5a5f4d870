"""The composition root: the one place that knows which concrete classes serve the ports.

`build_runtime(settings)` opens the record (SQLite or PostgreSQL), its read models and the blob store. Each process
(the site's lifespan, a worker's start, a CLI command) builds one runtime and hands it down: nothing else opens a
record or a second set of read models. Commands go to domain/eventlog/handlers.py with the runtime's record. No I/O
happens at import time; callers close the runtime when done (it is a context manager).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from adapters.blobs import Blobs, open_blobs
from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from adapters.run_recorder import GroupCommitter, RecordRunRecorder, with_retries
from adapters.settings import Settings
from domain.eventlog.record import Record
from domain.week.weeks import Clock, system_clock


@dataclass
class Runtime:
    settings: Settings
    record: Record
    blobs: Blobs
    readmodels: ReadModels = field(init=False)
    _agent_release: int | None = field(default=None, init=False)
    committer: GroupCommitter = field(init=False)
    """Saves the steps of this process's concurrent runs in shared transactions (its thread starts on first use)."""

    def __post_init__(self) -> None:
        self.readmodels = ReadModels(self.settings, self.record)
        self.committer = GroupCommitter(self.record)

    @property
    def clock(self) -> Clock:
        """The time events are stamped with and the schedule reads (tests move it)."""
        return self.record.clock

    def agent_release(self) -> int:
        """The number of the agent release this process runs, recorded in the log once (on first need)."""
        if self._agent_release is None:
            from adapters.models.release import current_agent  # the browser stack, only where runs start

            spec = current_agent()
            self._agent_release = with_retries(lambda: self.record.ensure_agent_released(spec), "agent release")
        return self._agent_release

    def recorder(self, run_id: UUID) -> RecordRunRecorder:
        return RecordRunRecorder(self.record, run_id, self.committer)

    def close(self) -> None:
        self.committer.close()
        self.record.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build_runtime(settings: Settings, clock: Clock = system_clock) -> Runtime:
    """The runtime; `clock` is what the record stamps events with and the schedule reads (tests move it)."""
    record = open_record(settings, clock=clock)
    blobs = open_blobs(settings)
    return Runtime(settings=settings, record=record, blobs=blobs)
