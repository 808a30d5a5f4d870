"""Runs written straight into a record: many runs in one save, with a controllable clock."""

from __future__ import annotations

import gzip
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.settings import Settings
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.record import Record
from domain.week.weeks import week_start

COURSE = load_course()
WEEK = "2026-W48"


class StepClock:
    """A clock that moves one second each time it is read: synthetic histories with exact times."""

    def __init__(self, start: datetime = datetime(2026, 11, 24, 9, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def unpacked_store(fixture: Path, data: Path) -> Settings:
    """A fixture's gzipped SQLite store (`fixture`/canitbuy.sqlite3.gz) unpacked into a new data folder `data`, as
    the code of its day left it."""
    data.mkdir()
    with gzip.open(fixture / "canitbuy.sqlite3.gz") as packed, (data / "canitbuy.sqlite3").open("wb") as out:
        shutil.copyfileobj(packed, out)
    return Settings(data_dir=data)


def point_the_cli_at(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `canitbuy` command, called in-process, reads the same store as the test."""
    monkeypatch.setenv("CANITBUY_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("CANITBUY_DATABASE_URL", settings.database_url)
    else:
        monkeypatch.delenv("CANITBUY_DATABASE_URL", raising=False)


def into_week(record: Record, week: str) -> None:
    """Move a StepClock forward into the week: a run counts for the week in which it starts, not for a label."""
    clock = record.clock
    if isinstance(clock, StepClock) and clock.now < week_start(week):
        clock.now = week_start(week) + timedelta(hours=9)


def finished_run(record: Record, model: str, station: str, passed: bool, week: str = WEEK, repeat: int = 0,
                 org: str | None = None) -> Run:
    into_week(record, week)
    reading = COURSE.station(station).is_reading
    run = Run.schedule(
        station=station, model=model, course_version="2.1", week=week, kind="reader" if reading else "browser",
        requested_by="test", repeat=repeat, org=org, at=record.clock(),
    )
    run.start(worker="w", browser_version="b", agent_version="a", at=record.clock())
    verdict = Verdict(passed=passed, outcome="passed" if passed else "stopped", stage="entry", step=2)
    run.finish(verdict, steps=2, seconds=3.0, at=record.clock())
    return run


def write_week(record: Record, passes: dict[str, int], week: str = WEEK, repeat: int = 0,
               org: str | None = None) -> list[Run]:
    """Each model passes s01 and its first `passes` obstacle stations; one save for the week."""
    runs = [
        finished_run(record, model, station, station == "s01" or i <= count, week, repeat, org)
        for model, count in passes.items() for i, station in enumerate(COURSE.codes)
    ]
    record.save(*runs)
    return runs
