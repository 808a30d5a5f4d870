"""The actor: `execute_run(ctx, run_id)` executes one scheduled run, wherever it is called from.

The same function is the arq job and the embedded pool's task. Delivery is at least once, so it is idempotent:
a run already finished or cut short is skipped, and so is a run whose lease another worker holds. A run found
`running` with a free lease was left by a worker that died: it cannot be resumed (its page state is gone), so it
is cut short (our error) and the schedule repeats it. Failures map to causes: the model unreachable is
`model_connection`; anything else of ours (the browser crashing, the lab unreachable, for the reading station
too: a store its crawl could not reach; the gateway refusing our key, credits or route) is `our_error`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

import anyio
import anyio.to_thread

from adapters.blobs import Blobs
from adapters.browser.media import RunMedia
from adapters.browser.session import PlaywrightSession
from adapters.fetcher import StoreUnreachableError
from adapters.run_recorder import RecordRunRecorder, with_retries
from domain.agent.agent_ports import BudgetCutError, GatewayRefusalError, ModelConnectionError, read_cut_step
from domain.agent.episode import CutShort, Episode
from domain.agent.judge import judge_answer
from domain.agent.runs import Run, ShownScreen
from domain.agent.verdicts import Verdict
from domain.projections.spend import SpendFold
from domain.week.weeks import week_of
from workers.agents import UnknownModelError
from workers.resources import Resources

log = logging.getLogger("canitbuy.worker")

MEDIA_SECONDS = 30.0
"""How long a run's trace may take to write and its browser context to close before the trace is given up."""
LOST_WORKER = "the worker executing this run was lost (its lease lapsed); the run cannot be resumed"


async def execute_run(ctx: dict[str, Any], run_id: str) -> str:
    """Execute the run; returns a short word for logs and arq results: skipped:*, passed, failed, cut_short."""
    res: Resources = ctx["resources"]
    rid = UUID(run_id)
    # A first look without the lease, so that a run over or held by the spending cap takes no lease.
    run = await anyio.to_thread.run_sync(lambda: with_retries(lambda: res.runtime.record.get_run(rid), "loading"))
    if run.is_over:
        return f"skipped: {run.status}"
    held = await spend_hold(ctx, res, run)
    if held is not None:
        log.warning("run %s not started: %s", run.id, held)
        return f"skipped: {held}"
    if run_id in res.executing:
        # Delivered again while this worker executes it. The lease is this worker's already (acquire is re-entrant
        # for a retried job), so going on would find the run `running` and cut its own live run short.
        return "skipped: executing here"
    res.executing.add(run_id)  # no await since the check: a second delivery cannot slip between them
    try:
        leased = await anyio.to_thread.run_sync(res.leases.acquire, run_id, res.worker_name, res.lease_seconds)
        if not leased:
            return "skipped: leased elsewhere"
        try:
            # Loaded again under the lease: another worker may have executed the run (and let its lease go)
            # between the first look and this lease. The recorder keeps this load for the run's first change.
            recorder = res.runtime.recorder(rid)
            run = await recorder.current()
            if run.is_over:
                return f"skipped: {run.status}"
            if run.status == "running":
                await recorder.cut_short("our_error", LOST_WORKER, steps=run.steps_recorded, seconds=0.0)
                return "cut_short"
            async with _heartbeat(res, run_id):
                return await _execute(res, run, recorder)
        finally:
            await anyio.to_thread.run_sync(res.leases.release, run_id, res.worker_name)
    finally:
        res.executing.discard(run_id)


async def spend_hold(ctx: dict[str, Any], res: Resources, run: Run) -> str | None:
    """Why a run of a priced model may not start now (the week's spend has reached the weekly cap), or None.
    The run stays scheduled: raising the cap lets the next requeue start it."""
    from adapters.models.lineup import estimated_run_usd, is_flagship

    flagship = is_flagship(run.model)
    settings = res.runtime.settings
    cap = settings.flagship_cap_usd if flagship else settings.weekly_cap_usd
    if cap is None or run.status != "scheduled" or estimated_run_usd(run.model) == 0:
        return None
    fold: SpendFold = ctx.setdefault("spend", SpendFold.empty())
    record = res.runtime.record

    def refresh() -> float:
        while page := record.read_log(after=fold.position, limit=5000):
            fold.apply(page)
        # Each line-up is held by its own cap, on its own models' spend.
        return fold.actual(week_of(record.clock()), lambda model: is_flagship(model) == flagship)

    spent = await anyio.to_thread.run_sync(refresh)
    if spent < cap:
        return None
    return f"{'flagship' if flagship else 'weekly'} spending cap reached (${spent:.2f} of ${cap:.2f})"


PUBLIC_LAB_DOMAIN = "lab.canitbuy.com"


def on_a_real_store(kind: str, start_url: str, lab_domain: str) -> bool:
    """ARC's task on a store that is not a station of a lab: its pages may load from any public host. Every course
    run, and an ARC run on our lab, has the store's host only (the stations stay apart)."""
    host = (urlsplit(start_url).hostname or "").lower()
    on_lab = any(host.endswith("." + domain) for domain in (lab_domain.lower(), PUBLIC_LAB_DOMAIN))
    return kind == "arc" and not on_lab


async def _execute(res: Resources, run: Run, recorder: RecordRunRecorder) -> str:
    began = time.monotonic()
    try:
        task = res.task_for(run)
        agent_version = res.agent_version(run.model)
        release = await anyio.to_thread.run_sync(res.agent_release, run.kind)
        await recorder.started(worker=res.worker_name, browser_version=res.browser_version(run.kind),
                               agent_version=agent_version, agent_release=release)
        if run.kind == "reader":
            return await _read(res, run, task, began, recorder)
        real_store = on_a_real_store(run.kind, task.start_url, res.runtime.settings.lab_domain)
        session = await res.browser_session(task.start_url, open_web=real_store)
    except ModelConnectionError as error:
        await recorder.cut_short("model_connection", str(error), steps=0, seconds=time.monotonic() - began)
        return "cut_short"
    except UnknownModelError as error:  # scheduled before the name was checked: one line, not a traceback
        log.error("run %s could not start: %s", run.id, error)
        await recorder.cut_short("our_error", f"{type(error).__name__}: {error}", steps=0,
                                 seconds=round(time.monotonic() - began, 3))
        return "cut_short"
    except Exception as error:  # noqa: BLE001 - ours: recorded as such, never silently dropped
        log.exception("run %s could not start", run.id)
        res.browser_suspect()
        await recorder.cut_short("our_error", f"{type(error).__name__}: {error}", steps=0,
                                 seconds=round(time.monotonic() - began, 3))
        return "cut_short"
    try:
        agent = res.agent_for(run.model)
        episode = Episode(session=session, agent=agent, task=task, recorder=recorder, blobs=res.runtime.blobs,
                          clock=time.monotonic, signed=res.agents.signer is not None, stores_ours=not real_store,
                          gate_refusal=session.gate_refusal)
        result = await episode.run()
    except BaseException:
        with anyio.CancelScope(shield=True):
            await _close_quietly(session)
        raise
    with anyio.CancelScope(shield=True):
        await _keep_media(res, session, recorder)
    if isinstance(result, CutShort):
        if result.cause == "our_error":
            res.browser_suspect()  # a crashed Chromium is relaunched before the next run
        return "cut_short"
    return "passed" if result.passed else "failed"


async def _read(res: Resources, run: Run, task: Any, began: float, recorder: RecordRunRecorder) -> str:
    """s12: the reader answers without a browser; code grades the answer. A store the reader could not reach is our
    error: the run is cut short with no step (the model's reader asked no model), never graded."""
    try:
        result = await res.reader_for(run.model, task.start_url).read(task)
    except (StoreUnreachableError, GatewayRefusalError) as error:
        # Our error, in its own words: the store out of the crawl's reach, or the gateway refusing our key, credits
        # or route ("the gateway refused our request: HTTP 401", as for the browser agent). No model answered, so
        # nothing was charged and there is no step.
        log.warning("reader run %s cut short: %s", run.id, error)
        await recorder.cut_short("our_error", str(error), steps=0, seconds=round(time.monotonic() - began, 3))
        return "cut_short"
    except ModelConnectionError as error:
        await recorder.cut_short("model_connection", str(error), steps=0,
                                 seconds=round(time.monotonic() - began, 3))
        return "cut_short"
    except BudgetCutError as error:
        # Our limit cut the reply: our error, not a result. The provider charged for the call, so it is the run's
        # step 1 (tokens, cost, exchange, no answer) before the run is cut short: the spend and its cap count it.
        log.warning("reader run %s cut short: %s", run.id, error)
        steps = 0
        if error.spent is not None:
            duration_ms = int((time.monotonic() - began) * 1000)
            await recorder.step_recorded(read_cut_step(error.spent, task.start_url, duration_ms=duration_ms))
            steps = 1
        await recorder.cut_short("our_error", f"{type(error).__name__}: {error}", steps=steps,
                                 seconds=round(time.monotonic() - began, 3))
        return "cut_short"
    except Exception as error:  # noqa: BLE001
        log.exception("reader run %s failed", run.id)
        await recorder.cut_short("our_error", f"{type(error).__name__}: {error}", steps=0,
                                 seconds=round(time.monotonic() - began, 3))
        return "cut_short"
    # A model's call is the run's one step, with its tokens and cost: the week's spend and its cap count it.
    step = result.as_step(task.start_url, duration_ms=int((time.monotonic() - began) * 1000))
    if step is not None:
        await recorder.step_recorded(step)
    # The pages fetched are recorded with the graded facts, so the run's page shows what the reader saw.
    verdict: Verdict = judge_answer(result.answer, pages=result.fetched)
    await recorder.finished(verdict, steps=0 if step is None else 1, seconds=round(time.monotonic() - began, 3))
    return "passed" if verdict.passed else "failed"


async def _keep_media(res: Resources, session: PlaywrightSession, recorder: RecordRunRecorder) -> None:
    """Close the ended run's browser context, keeping its trace and screens; the rest needs no browser (both into
    the blob store, then named on the run; the video is made of the screens when it is first watched), so it is
    left to `res.after_run` and the pool's slot is free for the next run meanwhile. Losing them (a crashed browser,
    a full disk) loses no result: it is logged, and the run stands as recorded."""
    try:
        with anyio.fail_after(MEDIA_SECONDS):
            media = await session.close_keeping_media()
    except Exception:  # noqa: BLE001 - a browser that cannot write its trace is still closed, and nothing lost
        log.warning("run %s: its trace could not be written", recorder.run_id, exc_info=True)
        await _close_quietly(session)
        return
    if media is None or media.empty:
        session.discard_media()
        return
    res.after_run(lambda: _finish_media(res, session, recorder, media))


async def _finish_media(res: Resources, session: PlaywrightSession, recorder: RecordRunRecorder,
                        media: RunMedia) -> None:
    try:
        trace, trace_bytes, screens = await anyio.to_thread.run_sync(put_media, res.runtime.blobs, media,
                                                                     limiter=res.media_limiter)
        await recorder.media_kept(trace=trace, trace_bytes=trace_bytes, screens=screens)
    except Exception:  # noqa: BLE001 - the run is recorded; only its trace and video are lost
        log.warning("run %s: its trace and video could not be kept", recorder.run_id, exc_info=True)
    finally:
        session.discard_media()


def put_media(blobs: Blobs, media: RunMedia) -> tuple[str | None, int, tuple[ShownScreen, ...]]:
    """The trace's digest and size once it is in the blob store (the file itself moved away), and the video's
    screens by digest (the steps' screenshots are there already; the screen the run ended on is put now)."""
    trace: str | None = None
    size = 0
    if media.trace is not None:
        size = media.trace.stat().st_size
        trace = blobs.put_file(media.trace)
    screens = tuple(ShownScreen(screenshot=blobs.put(jpeg), seconds=seconds) for jpeg, seconds in media.shown())
    return trace, size, screens


async def _close_quietly(session: Any) -> None:
    try:
        with anyio.fail_after(10):
            await session.close()
    except Exception:  # noqa: BLE001 - a crashed browser cannot close its context; nothing is lost
        log.debug("closing a browser session failed", exc_info=True)


@asynccontextmanager
async def _heartbeat(res: Resources, run_id: str) -> AsyncIterator[None]:
    """Renew the lease every third of its time while the run executes."""

    async def beat() -> None:
        while True:
            await anyio.sleep(res.lease_seconds / 3)
            try:
                held = await anyio.to_thread.run_sync(res.leases.renew, run_id, res.worker_name, res.lease_seconds)
            except Exception:  # noqa: BLE001 - a database restart: keep beating, the lease has slack
                log.warning("lease renewal for run %s failed; retrying", run_id)
                continue
            if not held:
                log.error("run %s: lease lost to another worker; its appends will be refused", run_id)
                return

    async with anyio.create_task_group() as group:
        group.start_soon(beat)
        try:
            yield
        finally:
            group.cancel_scope.cancel()
