"""A week written straight into a record whose runs have steps with real blobs (screenshots, element lists,
model exchanges) in a blob store, and its publication: what `canitbuy check` and the restore drill walk."""

from __future__ import annotations

import json

from record_builders import COURSE, WEEK, StepClock, into_week

from adapters.blobs import Blobs
from adapters.readmodels import ReadModels
from adapters.settings import Settings
from domain.agent.actions import Click
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.eventlog.commands import PublishWeek, SetRunOutcome
from domain.eventlog.handlers import issue_correction
from domain.eventlog.record import Record
from domain.week.publications import Publication
from domain.week.publishing import publish_week

MODELS = {"alpha": 9, "beta": 4}
"""Each model passes s01 and its first N obstacle stations."""


def _step(blobs: Blobs, run: str, number: int) -> StepRecord:
    shot = blobs.put(b"\xff\xd8" + f"screenshot {run} {number}".encode() * 50)
    elements = blobs.put(json.dumps([{"id": f"e{number}", "name": "Add to cart"}]).encode())
    exchange = blobs.put(json.dumps({"request": run, "response": number}).encode())
    return StepRecord(number=number, url=f"https://s01.lab/p/{number}", screenshot=shot, elements=elements,
                      exchange=exchange, action=Click(id=f"e{number}"), result="ok")


def write_week_with_blobs(record: Record, blobs: Blobs, week: str = WEEK) -> list[Run]:
    into_week(record, week)
    runs = []
    for model, count in MODELS.items():
        for i, station in enumerate(COURSE.codes):
            reading = COURSE.station(station).is_reading
            run = Run.schedule(station=station, model=model, course_version="2.1", week=week,
                               kind="reader" if reading else "browser", requested_by="test", at=record.clock())
            run.start(worker="w", browser_version="b", agent_version="a", at=record.clock())
            for n in (1, 2):
                run.record_step(_step(blobs, f"{model}-{station}", n), at=record.clock())
            passed = station == "s01" or i <= count
            run.finish(Verdict(passed=passed, outcome="passed" if passed else "stopped", stage="entry", step=2),
                       steps=2, seconds=3.0, at=record.clock())
            runs.append(run)
    record.save(*runs)
    return runs


def published_week(settings: Settings, record: Record, blobs: Blobs) -> Publication:
    """A week with steps and blobs, a correction, and its publication."""
    runs = write_week_with_blobs(record, blobs)
    readmodels = ReadModels(settings, record)
    issue_correction(record, readmodels, SetRunOutcome(run_id=runs[3].id, outcome="passed", reason="judge bug",
                                                       public_text="alpha passed.", by="staff"))
    return publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))


__all__ = ["StepClock", "WEEK", "published_week", "write_week_with_blobs"]
