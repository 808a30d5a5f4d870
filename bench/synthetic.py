"""Synthetic histories for the benchmarks: runs built in memory and saved many to a save, on a fresh database."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import psycopg

from domain.agent.actions import Click
from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.record import Record
from domain.week.weeks import next_week, week_start

COURSE = load_course()
MODELS = ["claude-haiku-5.5", "gemini-3.8-flash", "gpt-6-luna", "nova-2-lite", "qwen-3.8-flash"]


class SyntheticClock:
    """Moves 10 ms each time it is read, from a Monday after the results cut-off."""

    def __init__(self) -> None:
        self.now = datetime(2026, 10, 26, 6, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=10)
        return self.now


@contextmanager
def fresh_database(admin_url: str, keep: bool = False) -> Iterator[str]:
    name = f"canitbuy_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{admin_url.rpartition('/')[0]}/{name}"
    finally:
        if not keep:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def step(number: int) -> StepRecord:
    return StepRecord(
        number=number, url=f"https://s02.lab.canitbuy.com/p/{number}", title="NORDLYS", screenshot="a" * 64,
        elements="b" * 64, notes="The size buttons are labelled; I pick EU 42.", action=Click(id=f"e{number}"),
        result="ok", duration_ms=2100, model_ms=1800, tokens_in=4200, tokens_out=60, cost_usd=0.0012,
    )


def synthetic_run(record: Record, week: str, model: str, station: str, repeat: int, steps: int) -> Run:
    reading = COURSE.station(station).is_reading
    run = Run.schedule(station=station, model=model, course_version="2.1", week=week,
                       kind="reader" if reading else "browser", requested_by="bench", repeat=repeat,
                       at=record.clock())
    run.start(worker="bench", browser_version="156", agent_version="1.0", at=record.clock())
    for n in range(1, steps + 1):
        run.record_step(step(n), at=record.clock())
    passed = hash((week, model, station, repeat)) % 3 != 0
    run.finish(Verdict(passed=passed, outcome="passed" if passed else "stopped", stage="cart", step=steps),
               steps=steps, seconds=30.0, at=record.clock())
    return run


def write_history(record: Record, weeks: int, models: int, repeats: int, steps: int, per_save: int,
                  first: str = "2026-W44") -> int:
    """Write the history from week `first`; return the number of events."""
    week, batch, events = first, [], 0
    for _ in range(weeks):
        if isinstance(record.clock, SyntheticClock):  # a run counts for the week it starts in: start it there
            record.clock.now = max(record.clock.now, week_start(week) + timedelta(hours=6))
        for model in MODELS[:models]:
            for station in COURSE.codes:
                for repeat in range(repeats):
                    batch.append(synthetic_run(record, week, model, station, repeat, steps))
                    events += steps + 3
                    if len(batch) >= per_save:
                        record.save(*batch)
                        batch = []
        week = next_week(week)
    if batch:
        record.save(*batch)
    return events
