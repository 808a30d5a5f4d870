"""What an executor needs, built once per process (arq's on_startup, or the embedded pool's start).

One Chromium is shared by every run of the process (a fresh context per run); it starts on first need, so a
worker that only reads never launches it, and it is relaunched when a run saw it crash.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

import anyio

from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.browser.session import PlaywrightSession
from adapters.wiring import Runtime
from domain.agent.agent_ports import Agent, Reader, Task, TaskKind
from domain.agent.judge import BRIEF_MAX_TOTAL_CENTS
from domain.agent.runs import Run
from domain.courses.course import load_course
from domain.courses.tasks import task_text
from domain.leaderboards.arc_judge import arc_task
from workers.agents import AgentFactory
from workers.leases import DEFAULT_LEASE_SECONDS, LeaseStore

log = logging.getLogger("canitbuy.worker")
MEDIA_FOLDER = "media-in-progress"
"""Under the data folder: each browser run's trace while it runs, before it goes to the blob store."""
MEDIA_AT_ONCE = 1
"""Ended runs whose trace and screens go into the blob store at once per worker process (a thread)."""


def worker_name() -> str:
    """Host and process: which worker ran a run is part of its Started event."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class Lab:
    """Where the stations answer: sNN.<domain> on the lab URL's scheme and port."""

    url: str
    domain: str

    def station_url(self, station: str, path: str = "/") -> str:
        parts = urlsplit(self.url)
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{station}.{self.domain}{port}{path}"


@dataclass
class Resources:
    runtime: Runtime
    leases: LeaseStore
    lab: Lab
    agents: AgentFactory
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    worker_name: str = field(default_factory=worker_name)
    _browser: PlaywrightBrowser | None = None
    _suspect: bool = False
    _lock: anyio.Lock = field(default_factory=anyio.Lock)
    media_limiter: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(MEDIA_AT_ONCE))
    _after: set[asyncio.Task[None]] = field(default_factory=set)
    executing: set[str] = field(default_factory=set)
    """Runs this process is executing now (from taking the lease to letting it go): its own reaper leaves them
    (workers/reaper.py), and a second delivery of one is skipped (workers/executor.py)."""

    def after_run(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Work an ended run leaves that needs no browser (its trace and screens into the blob store): started now,
        done beside the next runs, and awaited by `aclose`, so a pool or worker that stops has finished it."""
        task = asyncio.get_running_loop().create_task(work())
        self._after.add(task)
        task.add_done_callback(self._after.discard)

    async def runs_finished(self) -> None:
        """Wait for the work ended runs left (see `after_run`)."""
        while self._after:
            await asyncio.wait(set(self._after))

    def task_for(self, run: Run) -> Task:
        if run.task == "arc":
            if not run.target_url:
                raise ValueError(f"ARC run {run.id} has no product address")
            return arc_task(run.target_url)
        course = load_course(run.course_version)
        start = run.target_url or self.lab.station_url(run.station)
        kind = cast(TaskKind, run.task)  # the course's task keys (domain/courses/tasks.py) are the agent's task kinds
        return Task(kind=kind, text=task_text(course, run.task), start_url=start,
                    max_total_cents=BRIEF_MAX_TOTAL_CENTS if run.task == "shop_brief" else None)

    def agent_for(self, model: str) -> Agent:
        return self.agents.agent(model)

    def reader_for(self, model: str, store_url: str) -> Reader:
        return self.agents.reader(model, store_url)

    def agent_version(self, model: str) -> str:
        return self.agents.version(model)

    def agent_release(self, kind: str) -> int:
        """The agent release a run of this kind runs with: none for the reader (no browser, no act tool)."""
        return 0 if kind == "reader" else self.runtime.agent_release()

    def browser_version(self, kind: str) -> str:
        if kind == "reader":
            return "reader/httpx"
        return self._browser.version if self._browser else "chromium"

    def browser_suspect(self) -> None:
        """A run failed in a way a dead browser explains: check it before the next run."""
        self._suspect = True

    async def browser_session(self, store_url: str, *, open_web: bool = False) -> PlaywrightSession:
        """A fresh context; it keeps a trace and video (in a folder under the data folder, so moving them into
        a folder blob store is a rename) unless CANITBUY_TRACES=off. `open_web`: a real store's run, whose pages
        may load from any public host (adapters/browser/playwright_browser.py)."""
        async with self._lock:
            if self._browser is None or (self._suspect and not _connected(self._browser)):
                await self._relaunch()
            self._suspect = False
        assert self._browser is not None
        settings = self.runtime.settings
        return await self._browser.session(store_url, media_dir=settings.data_dir / MEDIA_FOLDER
                                           if settings.traces else None, open_web=open_web)

    async def _relaunch(self) -> None:
        if self._browser is not None:
            log.warning("relaunching Chromium after a crash")
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                try:
                    await self._browser.stop()
                except Exception:  # noqa: BLE001 - the old one is dead already
                    log.debug("stopping a dead browser failed", exc_info=True)
        settings = self.runtime.settings
        self._browser = await PlaywrightBrowser(self.agents.signer, executable=settings.chromium_path).start()

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.runs_finished()
        if self._browser is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                await self._browser.stop()
            self._browser = None
        await self.agents.aclose()
        self.leases.close()


def _connected(browser: Any) -> bool:
    # PlaywrightBrowser keeps its Playwright Browser private; ask it when it is there.
    inner = getattr(browser, "_browser", None)
    return bool(inner is not None and inner.is_connected())


def resources_of(ctx: dict[str, Any]) -> Resources:
    """The process's resources in an arq (or embedded pool) job context, typed."""
    resources: Resources = ctx["resources"]
    return resources


def build_resources(
    runtime: Runtime, leases: LeaseStore, *, lab_url: str, directory_url: str | None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
) -> Resources:
    """The composition of a worker process: no browser yet (it starts on the first browser run)."""
    from adapters.botauth import BotAuthSigner, load_or_create_key

    settings = runtime.settings
    origin = directory_url or settings.agent_directory_url
    signer = None
    if origin:
        signer = BotAuthSigner(load_or_create_key(settings.agent_signing_key, settings.data_dir), origin)
    agents = AgentFactory(settings, runtime.blobs, signer)
    return Resources(runtime=runtime, leases=leases, lab=Lab(lab_url, settings.lab_domain), agents=agents,
                     lease_seconds=lease_seconds)
