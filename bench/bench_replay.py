"""Replay benchmark: rebuild the ranking and Matrix of a synthetic history on PostgreSQL.

Default: 52 weeks x 5 models x 18 stations x 3 repeats, 15 steps a run (18 events a run, about 253k events).
Prints events/s of (1) the raw limit: the same rows SELECTed with psycopg and decoded with msgspec, no domain
objects; (2) the pure replay: Record.read_log (step payloads skimmed) + LogState fold + every week's documents
(ranking, Matrix, repeats); (3) the read-model rebuild (the same plus writing every table, one transaction);
(4) an incremental catch-up of the newest week into the rebuilt read models. Each with its ratio against the raw
limit measured in the same run (compare ratios, not seconds: the machine may be busy), and the goals of issue 2:
a rebuild under 10 s and at least 0.6 of the raw rate, and of issue 12: replay at least 0.8 of raw. The raw limit
reads rows in psycopg's default text format (as it always has); the record reads them in binary format, so the
raw read in binary format is timed too and the replay's ratio against it printed beside the goal.

    python -O bench/bench_replay.py [--weeks 52 --models 5 --repeats 3 --steps 15 --page 5000 --rounds 3]
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

from adapters.eventstore import postgres_env, use_fast_log  # noqa: E402
from adapters.readmodels import ReadModels  # noqa: E402
from adapters.settings import Settings  # noqa: E402
from domain.eventlog.commands import PublishWeek  # noqa: E402
from domain.eventlog.record import Record  # noqa: E402
from domain.eventlog.store_check import check_store  # noqa: E402
from domain.projections.documents import week_documents  # noqa: E402
from domain.projections.repeats import repeats_bytes  # noqa: E402
from domain.week.publishing import publish_week, replay  # noqa: E402


def raw_read(url: str, page: int, binary: bool = False) -> int:
    decode, rows, after = msgspec.json.Decoder().decode, 0, 0
    with psycopg.connect(url) as conn:
        while True:
            batch = conn.execute(
                "SELECT notification_id, originator_id, originator_version, topic, state FROM canitbuy_events "
                "WHERE notification_id > %s ORDER BY notification_id LIMIT %s", (after, page), binary=binary,
            ).fetchall()
            if not batch:
                return rows
            for row in batch:
                decode(row[4])
            rows += len(batch)
            after = batch[-1][0]


class Timing:
    def __init__(self, seconds: float, rate: float) -> None:
        self.seconds, self.rate = seconds, rate


def timed(label: str, events: int, action, rounds: int, baseline: float | None = None) -> Timing:
    """The best of `rounds` runs of the action (the machine may be shared: the best is the least disturbed)."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    seconds = min(times)
    rate = events / seconds
    ratio = f"  ratio {rate / baseline:.2f} of raw" if baseline else ""
    spread = f"  (rounds {', '.join(f'{t:.2f}' for t in times)})" if rounds > 1 else ""
    print(f"{label:<38} {seconds:7.2f} s  {rate:>10,.0f} events/s{ratio}{spread}", flush=True)
    return Timing(seconds, rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--page", type=int, default=5000)
    parser.add_argument("--per-save", type=int, default=100, help="runs a save while writing the history")
    parser.add_argument("--rounds", type=int, default=3, help="time each stage this many times; keep the best")
    args = parser.parse_args()
    with fresh_database(args.admin_url) as url:
        record = use_fast_log(Record(env=postgres_env(url), clock=SyntheticClock()))
        record.ensure_course_released("2.1")
        started = time.perf_counter()
        events = write_history(record, args.weeks, args.models, args.repeats, args.steps, args.per_save) + 1
        asserts = "on" if __debug__ else "off"
        print(f"wrote {events:,} events in {time.perf_counter() - started:.1f} s (asserts {asserts})")
        with psycopg.connect(url, autocommit=True) as conn:  # as autovacuum would: statistics, hint bits
            conn.execute("VACUUM ANALYZE canitbuy_events")
        raw = timed("raw: psycopg + msgspec", events, lambda: raw_read(url, args.page), args.rounds).rate
        binary = timed("raw, rows in binary format", events, lambda: raw_read(url, args.page, True), args.rounds)

        def pure() -> None:
            state = replay(record.read_log, page=args.page)
            for facts in state.every_week_facts():
                week_documents(facts)
                repeats_bytes(facts)

        replayed = timed("replay: read_log + fold + documents", events, pure, args.rounds, raw)
        readmodels = ReadModels(Settings(database_url=url), record, page_size=args.page)
        readmodels.migrate()
        rebuilt = timed("rebuild: read models written", events, readmodels.rebuild, args.rounds, raw)
        week = readmodels.weeks()[0].week
        added = write_history(record, 1, args.models, args.repeats, args.steps, args.per_save, first=week)
        timed(f"catch-up: {added:,} new events of {week}", added, readmodels.catch_up, 1, raw)
        # `canitbuy check`: every event fully decoded (steps too), versions per aggregate, and every week's
        # publication recomputed (each week published once, as a year of Mondays would). The synthetic steps
        # name blobs that were never stored, so blobs are left out (one read and one sha256 each: the store's
        # speed, not ours).
        weeks = [w.week for w in readmodels.weeks()]
        for each in weeks:
            publish_week(record, readmodels, PublishWeek(week=each, by="bench"))
        total = record.head_position()
        checked = timed(f"check: {len(weeks)} publications", total,
                        lambda: check_store(record.read_log, None, page=args.page), args.rounds, raw)
        record.close()
        print(f"goals: rebuild {rebuilt.seconds:.2f} s (< 10 s: {'met' if rebuilt.seconds < 10 else 'missed'}); "
              f"replay {replayed.rate / raw:.2f} and rebuild {rebuilt.rate / raw:.2f} of raw "
              f"(>= 0.6: {'met' if min(replayed.rate, rebuilt.rate) >= 0.6 * raw else 'missed'}; issue 12: replay "
              f">= 0.8: {'met' if replayed.rate >= 0.8 * raw else 'missed'}; against raw in binary "
              f"{replayed.rate / binary.rate:.2f}); "
              f"check {checked.rate:,.0f} events/s (a nightly run over a year's history: "
              f"{total / checked.rate:.0f} s)")


if __name__ == "__main__":
    main()
