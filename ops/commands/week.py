"""`canitbuy week publish | show`: publish a week's ranking and Matrix; show what the record holds for it.

`week run` and `week schedule` live in week_run.py; this module hands them the same group.
"""

from __future__ import annotations

import argparse

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.eventlog.commands import PublishWeek
from domain.week.publications import PublicationError
from domain.week.publishing import RunsStillOpenError, UnknownWeekError, publish_week
from domain.week.weeks import WeekError, system_clock
from ops import arguments
from ops.cli import CommandError
from ops.commands import HELP, Subcommands, week_run


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    week = subcommands.add_parser("week", help=HELP["week"])
    sub = week.add_subparsers(dest="week_command", metavar="WEEK_COMMAND", required=True)
    week_run.add_subcommands(sub)
    # The parser is not called `publish`: that name is the handler's (shadowing it once set the parser itself as
    # the handler, and `week publish` crashed with "'ArgumentParser' object is not callable").
    publisher = sub.add_parser("publish", help="compute and publish a week's ranking and Matrix (provisionally while "
                                               "the week is in progress)")
    publisher.add_argument("--week", required=True, type=arguments.iso_week, help="ISO week, e.g. 2026-W48")
    publisher.add_argument("--by", required=True, type=publisher_name, help="who publishes (staff e-mail)")
    publisher.set_defaults(handler=publish)
    show = sub.add_parser("show", help="a week's position, course version and publications")
    show.add_argument("--week", required=True, type=arguments.iso_week, help="ISO week, e.g. 2026-W48")
    show.set_defaults(handler=show_week)
    return week


def publisher_name(text: str) -> str:
    """Who publishes, as it stays on the record for good: not blank, one line, of a reasonable length."""
    name = text.strip()
    if not name:
        raise argparse.ArgumentTypeError("the publisher's name is blank (give the staff e-mail)")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name) or len(name) > 254:
        raise argparse.ArgumentTypeError("give the publisher's staff e-mail (one line, at most 254 characters)")
    return name


def publish(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    command = PublishWeek(week=args.week, by=args.by)
    with build_runtime(settings, getattr(args, "clock", system_clock)) as runtime:
        try:
            published = publish_week(runtime.record, runtime.readmodels, command)
        except (WeekError, UnknownWeekError, PublicationError, RunsStillOpenError) as error:
            raise CommandError(str(error)) from None
    kind = "provisionally (the week is in progress) " if published.provisional else ""
    print(f"published {published.week} {kind}at log position {published.position}")
    print(f"  ranking sha256 {published.ranking_sha256}\n  matrix  sha256 {published.matrix_sha256}\n"
          f"  events  sha256 {published.events_sha256}")
    return 0


def show_week(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    week = args.week
    with build_runtime(settings) as runtime:
        try:
            runtime.readmodels.catch_up()
            docs = runtime.readmodels.week_documents(week)
            publications = runtime.readmodels.publications(week)
        except (WeekError, UnknownWeekError) as error:
            raise CommandError(str(error)) from None
    print(f"{week}: course {docs.course_version}, results up to log position {docs.position}")
    for n, p in enumerate(publications, start=1):
        kind = " (provisional)" if p.provisional else ""
        print(f"  publication {n}{kind}: position {p.position} by {p.by} at {p.at:%Y-%m-%d %H:%M} UTC")
    if not publications:
        print("  not published")
    return 0
