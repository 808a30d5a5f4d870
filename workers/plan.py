"""What a week's course is made of, and scheduling it exactly once.

Every scheduled run has a deterministic id: uuid5 of course version, week, model, station, repeat and attempt.
Scheduling the same run twice (a cron firing twice, two schedulers catching up at once, `week run` started
again) is therefore a no-op: existing runs are skipped, and the event store's version check rejects the loser
of a race (IntegrityError), which we take as "already scheduled".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.persistence import IntegrityError

from adapters.run_recorder import with_retries
from adapters.wiring import Runtime
from domain.courses.course import CURRENT_VERSION, load_course
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.eventlog.record import UnknownRunError
from domain.week.weeks import MAX_ATTEMPTS
from workers.ledger import RunLedger

RUN_NAMESPACE = uuid5(NAMESPACE_URL, "canitbuy:run")


@dataclass(frozen=True)
class Cell:
    model: str
    station: str
    repeat: int = 0


def run_id_for(week: str, cell: Cell, attempt: int, course_version: str = CURRENT_VERSION) -> UUID:
    return uuid5(RUN_NAMESPACE, f"{course_version}/{week}/{cell.model}/{cell.station}/{cell.repeat}/{attempt}")


Repeats = int | Mapping[str, int]
"""k for every model, or k per model (a model left out runs once)."""


def repeats_of(repeats: Repeats, model: str) -> int:
    return repeats if isinstance(repeats, int) else repeats.get(model, 1)


def course_cells(
    models: Sequence[str], repeats: Repeats = 1, course_version: str = CURRENT_VERSION,
    stations: Sequence[str] | None = None,
) -> list[Cell]:
    """Every model on every station (or the given ones), k repeats (the same k for all, or k per model as the
    line-up sets it); the control first for each model, so that an obstacle run means something (the same
    agent got through s01 the same day)."""
    course = load_course(course_version)
    control = course.control.code
    codes = [c for c in course.codes if stations is None or c in stations]
    k = {m: repeats_of(repeats, m) for m in models}
    first = [Cell(m, control, r) for m in models for r in range(k[m]) if control in codes]
    rest = [Cell(m, code, r) for code in codes if code != control for m in models for r in range(k[m])]
    return first + rest


def _exists(runtime: Runtime, run_id: UUID) -> bool:
    try:
        runtime.record.get_run(run_id)
        return True
    except UnknownRunError:
        return False


def schedule_cells(
    runtime: Runtime, week: str, cells: Iterable[tuple[Cell, int]], *, requested_by: str,
    course_version: str = CURRENT_VERSION,
) -> list[UUID]:
    """Schedule (cell, attempt) pairs not yet scheduled, in one transaction; returns every id in order."""
    ids: list[UUID] = []
    commands = []
    for cell, attempt in cells:
        run_id = run_id_for(week, cell, attempt, course_version)
        ids.append(run_id)
        if not with_retries(partial(_exists, runtime, run_id), "checking a run"):
            commands.append(ScheduleRun.on_course(
                station=cell.station, model=cell.model, requested_by=requested_by, week=week,
                course_version=course_version, attempt=attempt, repeat=cell.repeat, id=run_id,
            ))
    record = runtime.record
    try:
        with_retries(lambda: schedule_runs(record, commands), f"scheduling {len(commands)} runs")
    except IntegrityError:
        # Another scheduler won part of the race: store the rest one by one.
        for command in commands:
            try:
                with_retries(partial(schedule_runs, record, [command]), "scheduling a run")
            except IntegrityError:
                continue
    return ids


def schedule_course(
    runtime: Runtime, week: str, models: Sequence[str], *, repeats: Repeats = 1, requested_by: str,
    stations: Sequence[str] | None = None,
) -> list[UUID]:
    cells = course_cells(models, repeats, stations=stations)
    return schedule_cells(runtime, week, ((c, 1) for c in cells), requested_by=requested_by)


def schedule_repeats(runtime: Runtime, ledger: RunLedger, week: str, *, requested_by: str) -> list[UUID]:
    """A repeat (attempt + 1) of every cell of the week whose newest attempt was cut short. It counts for the week
    in which it starts, so the schedule makes it while the week is in progress (the same Monday afternoon)."""
    due = [
        (Cell(r.model, r.station, r.repeat), r.attempt + 1)
        for r in ledger.newest_attempts(week)
        if r.status == "cut_short" and r.attempt < MAX_ATTEMPTS
    ]
    due.sort(key=lambda pair: (pair[0].station != load_course().control.code, pair[0].station, pair[0].model))
    return schedule_cells(runtime, week, due, requested_by=requested_by)
