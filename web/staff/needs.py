"""What needs a person now: the desk's overview on one screen, each item linking to where it is handled.

Read in a worker thread per request (staff are few); every part comes from a read model or fold the site already
keeps, so the overview costs a few queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import msgspec

from domain.projections.spend import WeekSpend
from domain.week.weeks import (
    LINEUP_AT,
    PUBLISH_AFTER,
    REPEAT_AT,
    REPEAT_UNTIL,
    previous_week,
    scheduled_repeat,
    week_of,
    week_start,
)
from web.public.leaderboard import board_of
from web.public.live import live_context
from web.public.manual_tests import manual_of
from web.public.results import data_of
from web.public.spend import week_spend
from web.site import Site

NEWEST = 5


@dataclass
class Due:
    what: str
    at: datetime
    link: str
    offset: timedelta
    """After Monday 00:00 UTC."""


@dataclass
class Needs:
    active: list[dict[str, Any]]
    running: int
    cut_short: list[dict[str, Any]]
    """Cells whose newest attempt was cut short and that the schedule repeats (this week's, before Monday ends)."""
    repeats_due: datetime | None
    """When: Monday 14:00 UTC, or now (the schedule's next call) during Monday afternoon's window."""
    not_repeated: list[dict[str, Any]]
    """Cells cut short that the schedule will not repeat: a week before, after Monday's window, or the repeat
    itself cut short. A person repeats them from the desk, or they stay empty that week."""
    schedule: list[Due]
    submissions: list[Any]
    corrections: list[dict[str, Any]]
    unavailable: list[str]
    spend: WeekSpend
    manual_this_week: int
    week: str
    position: int
    weeks: list[Any] = field(default_factory=list)
    now: datetime | None = None
    refused: list[str] = field(default_factory=list)
    """Line-up models the gateway refused our request for at the week's check (our key, credits or route)."""


def _schedule(now: datetime) -> list[Due]:
    """The schedule's next three moves after now: line-up, repeats, publication of the week before."""
    this_monday = week_start(week_of(now))
    found = []
    for what, offset, link in (
        ("the weekly line-up starts", LINEUP_AT, "/staff/operations"),
        ("the cut-short runs are repeated", REPEAT_AT, "/staff/operations"),
        ("the week before is published", PUBLISH_AFTER, "/staff/operations"),
    ):
        at = this_monday + offset
        found.append(Due(what, at if at > now else at + timedelta(days=7), link, offset))
    if this_monday + REPEAT_AT <= now < this_monday + REPEAT_UNTIL:
        found.append(Due("the afternoon's repeats end", this_monday + REPEAT_UNTIL, "/staff/operations",
                         REPEAT_UNTIL))
    return sorted(found, key=lambda d: d.at)


def _cut_short(site: Site, weeks: tuple[str, ...]) -> list[dict[str, Any]]:
    """Cells whose newest attempt was cut short: not a result until a repeat ends."""
    newest: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for week in weeks:
        for run in msgspec.json.decode(data_of(site).readmodels.runs_index(week=week))["runs"]:
            key = (run["week"], run["model"], run["station"], run["repeat"])
            if key not in newest or run["attempt"] > newest[key]["attempt"]:
                newest[key] = run
    return [r for r in newest.values() if r["status"] == "cut_short"]


def needs_now(site: Site) -> Needs:
    now = site.runtime.record.clock()
    week = week_of(now)
    live = live_context(site)
    log = msgspec.json.decode(data_of(site).readmodels.corrections())["corrections"]
    lineup = site.runtime.record.lineup()
    tests = list(manual_of(site).tests.values())
    schedule = _schedule(now)
    cut_short = _cut_short(site, (week, previous_week(week)))
    due = {r["run_id"]: at for r in cut_short if (at := scheduled_repeat(r["week"], r["attempt"], now)) is not None}
    repeated = [r for r in cut_short if r["run_id"] in due]
    return Needs(
        active=live["active"], running=live["running"],
        cut_short=repeated,
        repeats_due=min(due.values(), default=None),
        not_repeated=[r for r in cut_short if r not in repeated],
        schedule=schedule,
        submissions=board_of(site).book.listed("unverified"),
        corrections=list(reversed(log))[:NEWEST],
        unavailable=[lineup.entrants[m].label if m in lineup.entrants else m for m in lineup.unavailable(week)
                     if m not in lineup.refused(week)],
        refused=[lineup.entrants[m].label if m in lineup.entrants else m for m in lineup.refused(week)],
        spend=week_spend(site, week),
        manual_this_week=sum(1 for t in tests if t.week == week),
        week=week, position=site.version, weeks=data_of(site).weeks, now=now,
    )

