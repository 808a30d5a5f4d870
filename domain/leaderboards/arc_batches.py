"""An ARC batch: one `canitbuy arc run` of one agent over rows of an ARC-shaped test set, one run a row.

The batch is its own aggregate so an export can name it (`canitbuy arc export BATCH`) and find every run, the
test set and the times of the run as a whole. Its runs are ordinary runs of kind and task "arc": recorded step
by step like any other, never scored in our ranking (only browser and reader runs of course stations are).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

import msgspec
from eventsourcing.domain import Aggregate

from domain.agent.runs import Run
from domain.leaderboards.arc import TestItem


class ArcRow(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the test set as the batch ran it."""

    id: str
    """The test set's id, e.g. arc100-v1-001 or s05."""
    host: str
    """The store host as the test set names it."""
    product_url: str
    """The product address as the test set names it."""
    start_url: str
    """Where the agent started: the product address, or its copy on the lab this batch ran against."""
    run_id: str
    """The run that gave this row its outcome."""


class ArcBatchError(Exception):
    """A command that does not fit the batch's state."""


class ArcBatch(Aggregate):
    class Started(Aggregate.Created):
        """A batch of ARC runs was scheduled, one run a row."""

        test_set: str
        """The test set's name: "ARC-100 v1" or "CanItBuy course 2.1"."""
        model: str
        """The model or built-in agent every run of the batch uses."""
        rows: list[ArcRow]
        requested_by: str
        """cli, or a staff member's e-mail."""

    class Finished(Aggregate.Event):
        """Every run of the batch has ended (or the command gave up on the rest)."""

        def apply(self, aggregate: ArcBatch) -> None:
            aggregate.finished_at = self.timestamp

    def __init__(self, *, test_set: str, model: str, rows: list[ArcRow], requested_by: str) -> None:
        self.test_set, self.model, self.rows, self.requested_by = test_set, model, list(rows), requested_by
        self.finished_at: datetime | None = None

    @classmethod
    def start(cls, *, test_set: str, model: str, rows: list[ArcRow], requested_by: str, at: datetime) -> ArcBatch:
        if not rows:
            raise ArcBatchError("a batch needs at least one row")
        return cls._create(cls.Started, id=uuid4(), timestamp=at, test_set=test_set, model=model, rows=rows,
                           requested_by=requested_by)

    def finish(self, *, at: datetime) -> None:
        if self.finished_at is not None:
            raise ArcBatchError(f"batch {self.id} is already finished")
        self.trigger_event(self.Finished, timestamp=at)

    @property
    def started_at(self) -> datetime:
        return self.created_on


def schedule_batch(
    *, test_set: str, model: str, items: Sequence[tuple[TestItem, str]], course_version: str, week: str,
    requested_by: str, at: datetime,
) -> tuple[ArcBatch, list[Run]]:
    """The batch and its runs (each item with the address its agent starts at), to be saved in one transaction."""
    runs = [
        Run.schedule(station=item.id, model=model, course_version=course_version, week=week, kind="arc",
                     task="arc", target_url=start_url, requested_by=requested_by, at=at)
        for item, start_url in items
    ]
    rows = [
        ArcRow(id=item.id, host=item.host, product_url=item.product_url, start_url=start_url, run_id=str(run.id))
        for (item, start_url), run in zip(items, runs, strict=True)
    ]
    return ArcBatch.start(test_set=test_set, model=model, rows=rows, requested_by=requested_by, at=at), runs


def load_batch(repository: Any, batch_id: UUID) -> ArcBatch | None:
    """The batch, or None when the id names no batch."""
    from eventsourcing.application import AggregateNotFoundError

    try:
        found = repository.get(batch_id)
    except AggregateNotFoundError:
        return None
    return found if isinstance(found, ArcBatch) else None
