"""Several processes starting at once on a fresh PostgreSQL database all come up, and the course is released once."""

from __future__ import annotations

import multiprocessing

from adapters.eventstore import open_record
from adapters.settings import Settings


def _open(url: str) -> None:
    open_record(Settings(database_url=url)).close()


def test_processes_starting_together_on_a_fresh_database_all_come_up(postgres_url: str) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_open, args=(postgres_url,)) for _ in range(4)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
    assert [p.exitcode for p in processes] == [0, 0, 0, 0]
    record = open_record(Settings(database_url=postgres_url))
    try:
        releases = [e for e in record.read_log(0) if e.name == "CourseRelease.Released"]
        assert len(releases) == 1
    finally:
        record.close()
