"""Replay benchmark: rebuild the ranking and Matrix of a synthetic history on PostgreSQL.

Default: 52 weeks x 5 models x 18 stations x 3 repeats, 15 steps a run (18 events a run, about 253k events).
Prints events/s of (1) the raw limit: the same rows SELECTed with psycopg and decoded with msgspec, no domain
objects; (2) the pure replay: Record.read_log + LogState fold + every week's documents; (3) the read-model
rebuild (the same plus writing every table), each with its ratio against the raw limit.

    python -O bench/bench_replay.py [--weeks 52 --models 5 --repeats 3 --steps 15 --page 5000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import msgspec
import psycopg

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from synthetic import SyntheticClock, fresh_database, write_history  # noqa: E402

from adapters.eventstore import postgres_env  # noqa: E402
from adapters.readmodels import ReadModels  # noqa: E402
from adapters.settings import Settings  # noqa: E402
from domain.projections.documents import week_documents  # noqa: E402
from domain.publishing import replay  # noqa: E402
from domain.record import Record  # noqa: E402


def raw_read(url: str, page: int) -> int:
    decode, rows, after = msgspec.json.Decoder().decode, 0, 0
    with psycopg.connect(url) as conn:
        while True:
            batch = conn.execute(
                "SELECT notification_id, originator_id, originator_version, topic, state FROM canitbuy_events "
                "WHERE notification_id > %s ORDER BY notification_id LIMIT %s", (after, page),
            ).fetchall()
            if not batch:
                return rows
            for row in batch:
                decode(row[4])
            rows += len(batch)
            after = batch[-1][0]


def timed(label: str, events: int, action, baseline: float | None = None) -> float:
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    rate = events / seconds
    ratio = f"  ratio {rate / baseline:.2f} of raw" if baseline else ""
    print(f"{label:<34} {seconds:7.2f} s  {rate:>10,.0f} events/s{ratio}")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--page", type=int, default=5000)
    parser.add_argument("--per-save", type=int, default=100, help="runs a save while writing the history")
    args = parser.parse_args()
    with fresh_database(args.admin_url) as url:
        record = Record(env=postgres_env(url), clock=SyntheticClock())
        record.ensure_course_released("2.1")
        started = time.perf_counter()
        events = write_history(record, args.weeks, args.models, args.repeats, args.steps, args.per_save) + 1
        asserts = "on" if __debug__ else "off"
        print(f"wrote {events:,} events in {time.perf_counter() - started:.1f} s (asserts {asserts})")
        with psycopg.connect(url, autocommit=True) as conn:  # as autovacuum would: statistics, hint bits
            conn.execute("VACUUM ANALYZE canitbuy_events")
        raw = timed("raw: psycopg + msgspec", events, lambda: raw_read(url, args.page))

        def pure() -> None:
            state = replay(record.read_log, page=args.page)
            for week in state.weeks():
                week_documents(state.week_facts(week))

        timed("replay: read_log + fold + documents", events, pure, raw)
        readmodels = ReadModels(Settings(database_url=url), record, page_size=args.page)
        readmodels.migrate()
        timed("rebuild: read models written", events, readmodels.rebuild, raw)
        record.close()


if __name__ == "__main__":
    main()
