"""arq scaling: the same work on 1 worker process and on 2, against one PostgreSQL and one Redis.

The work: 2 built-in agents x 6 stations (12 browser runs, with the agents' think pause standing in for model
latency), each worker process running CANITBUY_CONCURRENCY=2 runs at once. Prints both wall-clocks and the
scaling ratio (1-worker time / 2-worker time; 2.0 would be linear).

    python bench/bench_arq_scaling.py
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio
import psycopg
import redis

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from adapters.settings import Settings  # noqa: E402
from adapters.wiring import build_runtime  # noqa: E402
from ops.local_services import local_services  # noqa: E402
from workers.arq_app import enqueue_runs, queue_pool  # noqa: E402
from workers.ledger import RunLedger  # noqa: E402
from workers.plan import schedule_course  # noqa: E402

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
REDIS = "redis://127.0.0.1:6379/13"
MODELS = ["baseline-robust", "baseline-structured"]
STATIONS = ["s01", "s03", "s05", "s09", "s13", "s16"]


def measure(workers: int, week: str, settings: Settings, env: dict[str, str], log: Path) -> float:
    with build_runtime(settings) as runtime:
        ids = [str(i) for i in schedule_course(runtime, week, MODELS, requested_by="bench", stations=STATIONS)]
        procs = [subprocess.Popen([sys.executable, "-m", "ops.cli", "worker"], env=env, cwd=REPO,
                                  stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
                 for _ in range(workers)]
        time.sleep(4)  # workers start (runtime, leases); the clock starts at enqueue

        async def enqueue() -> None:
            pool = await queue_pool(settings)
            await enqueue_runs(pool, ids)
            await pool.aclose()

        began = time.perf_counter()
        anyio.run(enqueue)
        ledger = RunLedger(runtime.record)
        while not all(r.is_over for r in ledger.refresh().of(ids)):
            time.sleep(0.5)
        seconds = time.perf_counter() - began
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=30)
    return seconds


def main() -> None:
    name = f"canitbuy_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = ADMIN.rsplit("/", 1)[0] + f"/{name}"
    redis.Redis.from_url(REDIS).flushdb()
    data = Path(tempfile.mkdtemp(prefix="bench-arq-"))
    try:
        with local_services(Settings(data_dir=data)) as services:
            key = (data / "agent-signing-key").read_text().strip()
            settings = Settings(data_dir=data, database_url=url, redis_url=REDIS)
            env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")}
            env.update({"CANITBUY_DATABASE_URL": url, "CANITBUY_REDIS_URL": REDIS, "CANITBUY_DATA_DIR": str(data),
                        "CANITBUY_LAB_URL": services.lab_url, "CANITBUY_AGENT_SIGNING_KEY": key,
                        "CANITBUY_AGENT_DIRECTORY_URL": services.directory_url or "", "CANITBUY_CONCURRENCY": "2"})
            one = measure(1, "2026-W40", settings, env, data / "workers.log")
            two = measure(2, "2026-W41", settings, env, data / "workers.log")
    finally:
        with psycopg.connect(ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    runs = len(MODELS) * len(STATIONS)
    print(f"{runs} runs, 2 runs at once per worker process")
    print(f"1 worker : {one:.1f} s ({runs / one * 60:.1f} runs/min)")
    print(f"2 workers: {two:.1f} s ({runs / two * 60:.1f} runs/min)")
    print(f"scaling ratio {one / two:.2f} (2.00 = linear)")


if __name__ == "__main__":
    main()
