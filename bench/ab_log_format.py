"""A/B of the log's transfer format: replay (or `canitbuy check`) with rows read in text format (before) and in
binary format (after), alternated with the raw read in each round, in one process on one database. On a shared
machine the whole bench_replay run cannot separate the two; this can. Ratio = raw read seconds / replay seconds.

    python -O bench/ab_log_format.py [--weeks 12 --rounds 5] [--check]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg
from psycopg.rows import tuple_row

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from bench_replay import raw_read  # noqa: E402
from synthetic import SyntheticClock, fresh_database, write_history  # noqa: E402

from adapters.eventstore import PostgresLogSource, postgres_env, use_fast_log  # noqa: E402
from domain.eventlog.record import Notification, Record  # noqa: E402
from domain.eventlog.store_check import check_store  # noqa: E402
from domain.projections.documents import week_documents  # noqa: E402
from domain.projections.repeats import repeats_bytes  # noqa: E402
from domain.week.publishing import replay  # noqa: E402


class TextLogSource(PostgresLogSource):
    """The log source as it was before: rows in text format."""

    def notifications(self, after: int, limit: int, stop: int | None) -> list[Notification]:
        assert stop is None
        with self.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as cursor:
            cursor.execute(self._open, (after, limit), prepare=True)
            return cursor.fetchall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--weeks", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="time canitbuy check instead of the replay")
    args = parser.parse_args()
    with fresh_database(args.admin_url) as url:
        record = use_fast_log(Record(env=postgres_env(url), clock=SyntheticClock()))
        record.ensure_course_released("2.1")
        events = write_history(record, args.weeks, 5, 3, 15, 100) + 1
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE canitbuy_events")
        sources = {"text": TextLogSource(record.recorder), "binary": record.log_source}

        def pure() -> None:
            if args.check:
                check_store(record.read_log, None, page=5000)
                return
            for facts in replay(record.read_log, page=5000).every_week_facts():
                week_documents(facts)
                repeats_bytes(facts)

        ratios: dict[str, list[float]] = {name: [] for name in sources}
        for number in range(args.rounds):
            started = time.perf_counter()
            raw_read(url, 5000)
            raw = time.perf_counter() - started
            for name, source in sources.items():
                record.log_source = source
                started = time.perf_counter()
                pure()
                ratios[name].append(raw / (time.perf_counter() - started))
            print(f"round {number}: {events:,} events, raw {raw:.2f} s; ratio of raw with rows in text "
                  f"{ratios['text'][-1]:.2f}, in binary {ratios['binary'][-1]:.2f}", flush=True)
        print("median ratio: " + ", ".join(f"{name} {statistics.median(found):.2f}" for name, found in ratios.items()))
        record.close()


if __name__ == "__main__":
    main()
