"""The composition root: the one place that knows which concrete classes serve the ports.

`build_runtime(settings)` opens the record (SQLite or PostgreSQL), the blob store and the run facade. No I/O
happens at import time; callers close the runtime when done (it is a context manager).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from adapters.blobs import Blobs, open_blobs
from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from adapters.run_recorder import RecordRunRecorder, with_retries
from adapters.settings import Settings
from domain.course import CURRENT_VERSION, load_course
from domain.record import Record
from domain.tasks import kind_for, task_for
from domain.weeks import Clock, system_clock, week_of


@dataclass
class Runs:
    """Scheduling with the course's defaults filled in (version, week, kind and task from the station)."""

    record: Record

    def schedule_run(
        self, *, station: str, model: str, requested_by: str, kind: str | None = None,
        week: str | None = None, course_version: str = CURRENT_VERSION, attempt: int = 1, repeat: int = 0,
        org: str | None = None, target_url: str | None = None, id: UUID | None = None,  # noqa: A002
    ) -> UUID:
        return with_retries(
            lambda: self.record.schedule_run(**self.run_spec(
                station=station, model=model, requested_by=requested_by, kind=kind, week=week,
                course_version=course_version, attempt=attempt, repeat=repeat, org=org,
                target_url=target_url, id=id,
            )),
            f"scheduling {model} on {station}",
        )

    def run_spec(
        self, *, station: str, model: str, requested_by: str, kind: str | None = None,
        week: str | None = None, course_version: str = CURRENT_VERSION, attempt: int = 1, repeat: int = 0,
        org: str | None = None, target_url: str | None = None, id: UUID | None = None,  # noqa: A002
    ) -> dict[str, Any]:
        """Keyword arguments for Run.schedule; several go into one save with Record.schedule_runs."""
        spec = load_course(course_version).station(station)
        return {
            "station": station, "model": model, "course_version": course_version,
            "week": week or week_of(self.record.clock()), "kind": kind or kind_for(spec),
            "attempt": attempt, "requested_by": requested_by, "repeat": repeat, "task": task_for(spec),
            "org": org, "target_url": target_url, "id": id,
        }


@dataclass
class Runtime:
    settings: Settings
    record: Record
    blobs: Blobs
    runs: Runs = field(init=False)
    readmodels: ReadModels = field(init=False)
    _agent_release: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.runs = Runs(self.record)
        self.readmodels = ReadModels(self.settings, self.record)

    def agent_release(self) -> int:
        """The number of the agent release this process runs, recorded in the log once (on first need)."""
        if self._agent_release is None:
            from adapters.models.release import current_agent  # the browser stack, only where runs start

            spec = current_agent()
            self._agent_release = with_retries(lambda: self.record.ensure_agent_released(spec), "agent release")
        return self._agent_release

    def recorder(self, run_id: UUID) -> RecordRunRecorder:
        return RecordRunRecorder(self.record, run_id)

    def close(self) -> None:
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
