"""Append benchmark: step events of concurrent runs appended on PostgreSQL, sustained.

Each worker thread is the actor of `--runs` runs; every tick it records one step of each of its runs in one
save (several runs' events a save, as DESIGN.md advises). The baseline is a raw psycopg INSERT of the same rows
(same batch sizes, one transaction a batch) into a table shaped like the events table.

    python -O bench/bench_append.py [--workers 4 --runs 8 --seconds 10]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from synthetic import COURSE, SyntheticClock, fresh_database, step  # noqa: E402

from adapters.eventstore import postgres_env  # noqa: E402
from domain.record import Record  # noqa: E402
from domain.runs import Run  # noqa: E402
from domain.schema import encode_payload  # noqa: E402


def actor(record: Record, runs: list[Run], deadline: float, counts: list[int], index: int) -> None:
    number = 0
    while time.perf_counter() < deadline:
        number += 1
        for run in runs:
            run.record_step(step(number), at=record.clock())
        record.save(*runs)
        counts[index] += len(runs)


def ours(url: str, workers: int, per_worker: int, seconds: float) -> float:
    record = Record(env={**postgres_env(url), "POSTGRES_POOL_SIZE": str(workers + 2)}, clock=SyntheticClock())
    stations = COURSE.codes
    groups = []
    for w in range(workers):
        runs = [Run.schedule(station=stations[i % 18], model=f"m{w}", course_version="2.1", week="2026-W48",
                             kind="browser", requested_by="bench", at=record.clock()) for i in range(per_worker)]
        for run in runs:
            run.start(worker=f"w{w}", browser_version="156", agent_version="1.0", at=record.clock())
        record.save(*runs)
        groups.append(runs)
    counts = [0] * workers
    started = time.perf_counter()
    threads = [threading.Thread(target=actor, args=(record, g, started + seconds, counts, i))
               for i, g in enumerate(groups)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rate = sum(counts) / (time.perf_counter() - started)
    record.close()
    return rate


def raw(url: str, workers: int, per_worker: int, seconds: float) -> float:
    state = encode_payload({"step": step(1), "timestamp": "2026-11-24T10:00:00Z", "originator_topic": "x"})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE raw_events (id BIGSERIAL PRIMARY KEY, originator_id UUID, "
                     "originator_version BIGINT, topic TEXT, state BYTEA, UNIQUE (originator_id, originator_version))")
    counts = [0] * workers

    def insert(index: int, deadline: float) -> None:
        import uuid

        ids = [uuid.uuid4() for _ in range(per_worker)]
        version = 0
        with psycopg.connect(url) as conn:
            while time.perf_counter() < deadline:
                version += 1
                with conn.transaction(), conn.cursor() as cur:
                    cur.execute("LOCK TABLE raw_events IN EXCLUSIVE MODE")  # the library locks the table too
                    cur.executemany(
                        "INSERT INTO raw_events (originator_id, originator_version, topic, state) "
                        "VALUES (%s, %s, %s, %s)",
                        [(i, version, "domain.runs:Run.StepRecorded", state) for i in ids],
                    )
                counts[index] += per_worker

    started = time.perf_counter()
    threads = [threading.Thread(target=insert, args=(i, started + seconds)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--runs", type=int, default=8, help="runs a worker steps together (events a save)")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with fresh_database(args.admin_url) as url:
        Record(env=postgres_env(url)).close()  # create the tables before timing
        baseline = raw(url, args.workers, args.runs, args.seconds)
        rate = ours(url, args.workers, args.runs, args.seconds)
    print(f"raw INSERT (same rows, same batches)  {baseline:>9,.0f} events/s")
    print(f"Record.save of step events            {rate:>9,.0f} events/s  ratio {rate / baseline:.2f} of raw")
    print(f"goal >= 1,000 events/s: {'met' if rate >= 1000 else 'NOT met'}")


if __name__ == "__main__":
    main()
