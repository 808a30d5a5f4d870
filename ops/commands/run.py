"""`canitbuy run --station s05 --model baseline-robust [--lab-url URL] [--json]`: one run, end to end.

The run is scheduled and recorded like any other (events in the configured store, screenshots in the blob
store) and executed here by the same actor the workers use; with no lab URL a lab starts in-process.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any
from uuid import UUID

import anyio
import msgspec

from adapters.run_recorder import with_retries
from adapters.settings import Settings, SettingsError
from adapters.wiring import Runtime, build_runtime
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import week_of
from ops import arguments
from ops.cli import CommandError
from ops.commands import HELP, Subcommands
from ops.local_services import local_services
from workers.executor import execute_run
from workers.leases import open_leases
from workers.resources import build_resources


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    parser = subcommands.add_parser("run", help=HELP["run"])
    parser.add_argument(
        "--station", required=True, type=arguments.station, help="station code, s01..s18 (s12 runs the reader)"
    )
    parser.add_argument(
        "--model",
        required=True,
        type=arguments.model,
        help="a built-in agent (baseline-robust, ...) or a line-up model",
    )
    parser.add_argument(
        "--lab-url",
        type=arguments.http_url,
        help="where the stations answer, e.g. http://127.0.0.1:8700 (default CANITBUY_LAB_URL, "
        "else a lab started in-process)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run_one)
    return parser


def _settings(lab_url: str | None) -> Settings:
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise CommandError(str(error)) from None
    return msgspec.structs.replace(settings, lab_url=lab_url) if lab_url else settings


def run_one(args: argparse.Namespace) -> int:
    settings = _settings(args.lab_url)
    with build_runtime(settings) as runtime, local_services(settings) as services:
        command = ScheduleRun.on_course(
            station=args.station, model=args.model, requested_by="cli", week=week_of(runtime.record.clock())
        )
        [run_id] = with_retries(lambda: schedule_runs(runtime.record, [command]), "scheduling the run")
        began = time.monotonic()
        anyio.run(_execute, runtime, services.lab_url, services.directory_url, run_id)
        summary = _summary(runtime, run_id, args.station, args.model, round(time.monotonic() - began, 2))
    _print(summary, args.json)
    if summary["outcome"] != "cut_short":
        return 0
    detail = " ".join(str(summary.get("detail", "")).split()) or "no detail recorded"
    print(f"canitbuy: run cut short ({summary.get('cause', 'cause not recorded')}): {detail}", file=sys.stderr)
    return 1


async def _execute(runtime: Runtime, lab_url: str, directory_url: str | None, run_id: UUID) -> None:
    leases = open_leases(runtime.settings)
    resources = build_resources(runtime, leases, lab_url=lab_url, directory_url=directory_url)
    try:
        await execute_run({"resources": resources}, str(run_id))
    finally:
        await resources.aclose()


def _summary(runtime: Runtime, run_id: UUID, station: str, model: str, seconds: float) -> dict[str, Any]:
    run = runtime.record.get_run(run_id)
    verdict = run.verdict
    summary: dict[str, Any] = {
        "run_id": str(run_id),
        "station": station,
        "model": model,
        "passed": bool(verdict and verdict.passed),
        "outcome": verdict.outcome if verdict else run.status,
        "steps": run.steps_recorded,
        "seconds": seconds,
    }
    if run.status == "cut_short":  # why it broke off: the run's own CutShort event (the aggregate keeps no cause)
        from domain.agent.runs import Run as RunAggregate

        cut = [e for e in runtime.record.events.get(run_id) if isinstance(e, RunAggregate.CutShort)]
        if cut:
            summary.update(cause=cut[-1].cause, detail=cut[-1].detail)
    if verdict is not None:
        summary.update(
            stage=verdict.stage, reason=verdict.reason, broke=list(verdict.broke), facts_right=verdict.facts_right
        )
    return summary


def _print(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary, sort_keys=True))
        return
    verdict = "PASSED" if summary["passed"] else summary["outcome"].upper()
    print(
        f"{summary['station']} · {summary['model']}: {verdict} after {summary['steps']} steps "
        f"({summary.get('reason', 'not a result')})"
    )
    print(f"run {summary['run_id']}")
