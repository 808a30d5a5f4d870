"""The reaper: whoever notices a lapsed lease cuts its run short (our error), so a killed worker's half run
is never left `running` and is never a result. The Monday repeat (workers/plan.py) runs the cell again.

It runs at worker start and then every lease period (arq workers), and before `week run` executes anything.
A worker never reaps a run it is itself executing: its lease lapsed because a renewal came late (a loaded machine,
a database restarting), not because the worker was lost, and the next renewal restores it. Another worker, which
cannot tell a late heartbeat from a dead one, still may.
"""

from __future__ import annotations

import logging
from collections.abc import Container
from functools import partial
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from adapters.run_recorder import with_retries
from adapters.wiring import Runtime
from domain.agent.runs import RunError
from workers.executor import LOST_WORKER
from workers.leases import LeaseStore

log = logging.getLogger("canitbuy.reaper")


def reap(runtime: Runtime, leases: LeaseStore, *, holder: str | None = None,
         executing: Container[str] = ()) -> list[str]:
    """Cut short every running run whose lease lapsed, except those `holder` (this worker) is executing;
    returns their ids (synchronous: use a thread)."""
    reaped = []
    for lapsed in leases.lapsed():
        if lapsed.holder == holder and lapsed.run_id in executing:
            log.warning("run %s: its lease lapsed while this worker executes it (a late renewal); kept",
                        lapsed.run_id)
            continue
        run = with_retries(partial(runtime.record.get_run, UUID(lapsed.run_id)), "loading a run")
        if run.status == "running":
            log.warning("run %s: the lease of %s lapsed; cutting the run short", lapsed.run_id, lapsed.holder)
            try:
                cut_short = partial(runtime.record.cut_short_run, run.id, "our_error", LOST_WORKER,
                                    steps=run.steps_recorded)
                with_retries(cut_short, "cutting a run short")
                reaped.append(lapsed.run_id)
            except (RunError, IntegrityError):
                pass  # the holder was alive after all and ended the run first: its ending stands
        leases.forget(lapsed.run_id)  # only while still lapsed: a worker that renewed meanwhile keeps it
    return reaped
