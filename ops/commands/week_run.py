"""`canitbuy week run | schedule`: the weekly course, executed now; and the schedule's catch-up.

These join the `week` command (whose `publish` and `show` live in week.py): week.py hands this module its group
of subcommands.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import anyio.to_thread

from adapters.settings import Settings, SettingsError
from adapters.wiring import Runtime, build_runtime
from domain.week.weeks import PastWeekError, WeekError, is_over, open_week, system_clock, week_of
from ops import arguments
from ops.cli import CommandError, UsageError
from ops.commands import Subcommands
from ops.local_services import local_services
from ops.progress import Progress, Tally
from ops.week_course import CourseRun
from workers.agents import UnknownModelError, is_known
from workers.ledger import RunLedger
from workers.plan import schedule_course, schedule_repeats
from workers.schedule import catch_up, publish, week_models, week_repeats


def add_subcommands(group: Subcommands) -> None:
    run = group.add_parser("run", help="schedule the line-up over the course and execute it now")
    run.add_argument("--week", type=arguments.iso_week,
                     help="the week in progress, UTC (the default): a run counts for the ISO week in which it "
                          "starts, so a week that is over takes no more runs")
    run.add_argument("--models", type=arguments.models,
                     help="comma-separated models or built-in agents (default: the week's line-up; the five "
                          "built-in agents when no model key is configured)")
    run.add_argument("--stations", type=arguments.stations,
                     help="comma-separated subset of stations, for trials (a partial week ranks no model: every "
                          "obstacle station is needed)")
    run.add_argument("--repeats", type=arguments.whole_number(1, 20),
                     help="runs per station and model (k) for every model, 1 to 20 (default: each line-up "
                          "entrant's repeats as staff set it; 1 for others)")
    run.add_argument("--concurrency", type=arguments.whole_number(1, 64),
                     help="runs at once in-process, 1 to 64 (default CANITBUY_CONCURRENCY)")
    run.add_argument("--publish", action="store_true", help="publish the week when its runs are over: "
                     "provisionally while the week is in progress (its final publication follows once it is over)")
    run.add_argument("--json", action="store_true", help="print one JSON object (progress goes to stderr)")
    run.set_defaults(handler=run_week)
    schedule = group.add_parser("schedule", help="do what the schedule says is due (line-up Monday 06:00 UTC, "
                                                  "repeats Monday afternoon from 14:00, then publication); safe to "
                                                  "repeat")
    schedule.add_argument("--now", type=arguments.utc_time,
                          help="pretend it is this later UTC time of the week in progress (ISO 8601); a week that "
                               "is over takes no more runs, and a week not begun is refused")
    schedule.add_argument("--no-execute", action="store_true", help="only schedule; workers execute later")
    schedule.set_defaults(handler=run_schedule)


def _settings(concurrency: int | None = None) -> Settings:
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise CommandError(str(error)) from None
    if concurrency is not None:
        import msgspec

        settings = msgspec.structs.replace(settings, concurrency=concurrency)
    if settings.redis_url and not settings.lab_url:
        raise CommandError("with CANITBUY_REDIS_URL set, workers need CANITBUY_LAB_URL (where the stations answer)")
    return settings


def _models(typed: list[str] | None, runtime: Runtime, week: str) -> list[str]:
    """The models typed (each checked when read), else the week's line-up, whose names the record holds."""
    models = typed or week_models(runtime, week)
    unknown = [m for m in models if not is_known(m)]
    if unknown:
        raise CommandError(str(UnknownModelError(unknown[0])))
    return list(dict.fromkeys(models))


def run_week(args: argparse.Namespace) -> int:
    settings = _settings(args.concurrency)
    clock = getattr(args, "clock", system_clock)
    try:
        week = open_week(args.week, clock()) if args.week else week_of(clock())
    except WeekError as error:
        raise UsageError(str(error)) from None
    stream = sys.stderr if args.json else sys.stdout
    progress = Progress(stream, stream.isatty())
    with build_runtime(settings, clock) as runtime, local_services(settings) as services:
        models = _models(args.models, runtime, week)
        ledger = RunLedger(runtime.record)
        course = CourseRun(runtime, ledger, progress, settings.concurrency, services.lab_url,
                           services.directory_url, [])
        stations = args.stations
        repeats = args.repeats if args.repeats is not None else week_repeats(runtime, week)
        ids = schedule_course(runtime, week, models, repeats=repeats, requested_by="cli", stations=stations)
        _execute(course, [str(i) for i in ids])
        # The Monday repeat, done at once: each cell cut short gets one more attempt, counted for this week.
        ledger.refresh()
        again = schedule_repeats(runtime, ledger, week, requested_by="cli")
        if again:
            _execute(course, [str(i) for i in again])
        progress.end()
        ledger.refresh()
        summary = _summary(runtime, ledger, week, models, course.run_ids, args.publish)
    _print(summary, args.json, stream)
    return 0 if summary["totals"]["unfinished"] == 0 else 1


def _execute(course: CourseRun, run_ids: list[str]) -> None:
    """Execute the runs; a queue's Redis that refuses or does not answer is one line (the runs stay scheduled in
    the record: the same command runs them once Redis answers)."""
    from workers.arq_app import RedisUnreachable

    try:
        anyio.run(course.execute, run_ids)
    except RedisUnreachable as error:
        raise CommandError(f"{error}; the runs stay scheduled, and the same command runs them once it answers") \
            from None


def _summary(runtime: Runtime, ledger: RunLedger, week: str, models: list[str], run_ids: list[str],
             publish_it: bool) -> dict[str, Any]:
    runs = ledger.of(run_ids)
    tally = Tally.of(runs, len(runs))
    published = publish(runtime, week) if publish_it else None
    readmodels = runtime.readmodels
    readmodels.catch_up()
    ranking = json.loads(readmodels.week_documents(week).ranking)
    entries = [
        {"model": e["model"], "label": e.get("label", e["model"]), "place": e["place"], "ranked": e["ranked"],
         "passed": e["passed"], "of": e["of"], "control_passed": e["control_passed"]}
        for e in ranking.get("entries", []) if e["model"] in models
    ]
    return {
        "week": week, "models": models,
        "totals": {"runs": tally.total, "passed": tally.passed, "failed": tally.failed,
                   "cut_short": tally.cut_short, "unfinished": tally.total - tally.done},
        "runs": [{"run_id": r.run_id, "model": r.model, "station": r.station, "repeat": r.repeat,
                  "attempt": r.attempt, "status": r.status, "outcome": r.outcome, "passed": r.passed,
                  "cause": r.cut_short_cause} for r in runs],
        "ranking": entries,
        "published": None if published is None else {
            "position": published.position, "ranking_sha256": published.ranking_sha256,
            "matrix_sha256": published.matrix_sha256, "events_sha256": published.events_sha256,
            "provisional": published.provisional},
    }


def _print(summary: dict[str, Any], as_json: bool, stream: Any) -> None:
    if as_json:
        print(json.dumps(summary, sort_keys=True))
        return
    t = summary["totals"]
    print(f"\n{summary['week']}: {t['runs']} runs, {t['passed']} passed, {t['failed']} failed, "
          f"{t['cut_short']} cut short, {t['unfinished']} unfinished")
    print(f"{'place':>5}  {'model':<24} {'passed':>6}  control")
    for e in sorted(summary["ranking"], key=lambda e: (e["place"] is None, e["place"] or 0, e["model"])):
        place = str(e["place"]) if e["ranked"] else "-"
        print(f"{place:>5}  {e['label']:<24} {e['passed']:>3}/{e['of']:<2}  {'yes' if e['control_passed'] else 'no'}")
    if summary["published"]:
        kind = "provisionally (the week is in progress; its close supersedes this) " \
            if summary["published"]["provisional"] else ""
        print(f"published {kind}at log position {summary['published']['position']}")


def run_schedule(args: argparse.Namespace) -> int:
    settings = _settings()
    clock = getattr(args, "clock", system_clock)
    today = clock()
    now = args.now or today
    try:
        week, this_week = week_of(now), week_of(today)
        over = is_over(week, today)
    except (WeekError, ValueError, OverflowError) as error:
        raise UsageError(f"--now {now.isoformat()}: {error}") from None
    if over:  # the events are stamped with the real clock: they would count elsewhere
        raise UsageError(f"--now {now.isoformat()}: {PastWeekError(week, today)}")
    if now < today:  # the schedule would do now what was due then (a Monday afternoon's repeats on a Wednesday)
        raise UsageError(f"--now {now.isoformat()}: that is earlier than it is now ({today.isoformat()}); --now "
                         "is a later time of the week in progress")
    if now > today and week != this_week:  # runs of a week not begun would be stamped now, in this week
        raise UsageError(f"--now {now.isoformat()}: week {week} has not begun (it is {this_week} now); --now "
                         "is a later time of the week in progress")
    with build_runtime(settings, clock) as runtime:
        ledger = RunLedger(runtime.record)
        # Publication waits for execution in the embedded default, so run the schedule first without it.
        done = catch_up(runtime, ledger, now, models=week_models(runtime, week_of(now)), publish=None,
                        repeats=week_repeats(runtime, week_of(now)))
        print(f"scheduled {len(done.lineup)} line-up runs and {len(done.repeats)} repeats (existing ones kept)")
        if not args.no_execute:
            ledger.refresh()
            pending = [r.run_id for r in ledger.open_runs()]
            with local_services(settings) as services:
                course = CourseRun(runtime, ledger, Progress(sys.stdout, sys.stdout.isatty()),
                                   settings.concurrency, services.lab_url, services.directory_url, [])
                _execute(course, pending)
                course.progress.end()
        published = catch_up(runtime, ledger, now, models=[], publish=publish).published
        print(f"published: {', '.join(published) if published else 'nothing due'}")
    return 0
