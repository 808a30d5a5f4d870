"""Append benchmark: the step events of concurrent runs, appended on PostgreSQL the way a worker appends them.

`--concurrency` runs are in flight at once (asyncio tasks in one worker process, as the embedded pool and an
arq worker run them); each appends its 16 steps one after another through the runtime's run recorder, waiting
for each to be durable before the next, as the episode does. Started runs are prepared before timing; only the
steps are timed. The floor, measured in the same run on the same database: a raw psycopg INSERT of the same
rows, one step of every run in flight a transaction (the best any batching of these runs could do), under the
same table lock the library takes.

Two recorders are timed against that floor, alternated with it in each round: `ours` (the record as the runtime
opens it: adapters/pg_recorder.py, one round trip a save) and `library` (eventsourcing's own PostgreSQL recorder,
the before side). Each round prints its figures; the summary gives each level's median ratio.

    python -O bench/bench_append.py [--concurrency 4 16 64] [--runs-per-level 640] [--rounds 3]
        [--recorders ours library]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from synthetic import COURSE, fresh_database, step  # noqa: E402

from adapters.blobs import open_blobs  # noqa: E402
from adapters.eventstore import postgres_env  # noqa: E402
from adapters.settings import Settings  # noqa: E402
from adapters.wiring import Runtime, build_runtime  # noqa: E402
from domain.agent.runs import Run  # noqa: E402
from domain.eventlog.record import Record  # noqa: E402
from domain.eventlog.schema import encode_payload  # noqa: E402

STEPS = 16


def prepare(runtime: Runtime, count: int) -> list[uuid.UUID]:
    record = runtime.record
    runs = []
    for i in range(count):
        run = Run.schedule(station=COURSE.codes[i % 18], model=f"m{i % 5}", course_version="2.1",
                           week="2026-W48", kind="browser", requested_by="bench", at=record.clock())
        run.start(worker="bench", browser_version="156", agent_version="1.0", at=record.clock())
        runs.append(run)
    for i in range(0, count, 200):
        record.save(*runs[i:i + 200])
    return [run.id for run in runs]


async def ours(runtime: Runtime, run_ids: list[uuid.UUID], concurrency: int) -> float:
    waiting = list(reversed(run_ids))

    async def actor() -> None:
        while waiting:
            recorder = runtime.recorder(waiting.pop())
            for number in range(1, STEPS + 1):
                await recorder.step_recorded(step(number))

    committer = getattr(runtime, "committer", None)  # none before group commit
    transactions = committer.transactions if committer else 0
    began = time.perf_counter()
    await asyncio.gather(*(actor() for _ in range(concurrency)))
    rate = len(run_ids) * STEPS / (time.perf_counter() - began)
    if committer:
        print(f"    {len(run_ids) * STEPS / max(committer.transactions - transactions, 1):.1f} steps a transaction")
    return rate


def raw(url: str, runs: int, concurrency: int) -> float:
    state = encode_payload({"step": step(1), "timestamp": "2026-11-24T10:00:00Z", "originator_topic": "x"})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS raw_events")
        conn.execute("CREATE TABLE raw_events (id BIGSERIAL PRIMARY KEY, originator_id UUID, "
                     "originator_version BIGINT, topic TEXT, state BYTEA, UNIQUE (originator_id, originator_version))")
    began = time.perf_counter()
    with psycopg.connect(url) as conn:
        for first in range(0, runs, concurrency):
            ids = [uuid.uuid4() for _ in range(min(concurrency, runs - first))]
            for version in range(3, STEPS + 3):
                with conn.transaction(), conn.cursor() as cur:
                    cur.execute("LOCK TABLE raw_events IN EXCLUSIVE MODE")  # the library locks the table too
                    cur.executemany(
                        "INSERT INTO raw_events (originator_id, originator_version, topic, state) "
                        "VALUES (%s, %s, %s, %s)",
                        [(i, version, "domain.agent.runs:Run.StepRecorded", state) for i in ids],
                    )
    return runs * STEPS / (time.perf_counter() - began)


@contextmanager
def library_runtime(url: str) -> Iterator[Runtime]:
    """The runtime on eventsourcing's own PostgreSQL recorder (the before side), on the same database."""
    settings = Settings(database_url=url)
    record = Record(env={**postgres_env(url), "PERSISTENCE_MODULE": "eventsourcing.postgres"})
    record.ensure_course_released("2.1")
    with Runtime(settings=settings, record=record, blobs=open_blobs(settings)) as runtime:
        yield runtime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16, 64], help="runs in flight")
    parser.add_argument("--runs-per-level", type=int, default=640, help="runs of 16 steps appended at each level")
    parser.add_argument("--rounds", type=int, default=3, help="floor and recorders alternated this many times")
    parser.add_argument("--recorders", nargs="+", default=["ours", "library"], choices=["ours", "library"])
    args = parser.parse_args()
    ratios: dict[tuple[int, str], list[float]] = defaultdict(list)
    with fresh_database(args.admin_url) as url, ExitStack() as stack:
        runtimes = {"ours": stack.enter_context(build_runtime(Settings(database_url=url)))}
        if "library" in args.recorders:
            runtimes["library"] = stack.enter_context(library_runtime(url))
        for concurrency in args.concurrency:
            for _ in range(args.rounds):
                load = os.getloadavg()[0]
                floor = raw(url, args.runs_per_level, concurrency)
                line = f"{concurrency:>3} runs in flight: raw INSERT {floor:>8,.0f} events/s"
                for name in args.recorders:
                    runtime = runtimes[name]
                    rate = asyncio.run(ours(runtime, prepare(runtime, args.runs_per_level), concurrency))
                    ratios[concurrency, name].append(rate / floor)
                    line += f"   {name} {rate:>7,.0f} events/s ratio {rate / floor:.2f}"
                print(f"{line}   load average {load:.2f}", flush=True)
    print("median ratio of the raw INSERT measured in the same round (goal >= 0.5):")
    for (concurrency, name), found in ratios.items():
        median = statistics.median(found)
        print(f"  {concurrency:>3} runs in flight, {name:<7}: {median:.2f} ({'met' if median >= 0.5 else 'NOT met'};"
              f" rounds {', '.join(f'{r:.2f}' for r in found)})")


if __name__ == "__main__":
    main()
