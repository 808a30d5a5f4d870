"""The schedule: the weekly line-up Monday 06:00 UTC (and the flagship line-up beside it on the first Monday of a
month), the same Monday afternoon (from 14:00 UTC until Monday ends) a repeat of every run of the line-up that was
cut short, and on no other day (a cut-short run the afternoon did not repeat leaves its cell empty), and the week's
publication once the week is over (Sunday has ended) and every run that started in it has ended. Before the line-up
each model is checked through the gateway; one the check could not reach is checked again at 14:00 UTC and, if it
answers then, its line-up runs are scheduled then; still unreachable, it gets no place that week. A week is
the calendar: a run counts for the ISO week in which it started, so nothing the schedule does on a Monday can
change the week before.

`catch_up(now)` is the whole schedule as one idempotent function of the clock and the log: it does what is due
and not yet done; `now` comes from the runtime's clock (the record's), which the tests move. arq's cron calls it
every few minutes (and at worker start), `canitbuy week schedule` calls it for the embedded default, so a
schedule missed during downtime is caught up at the next call and never doubled (run ids are deterministic,
publications are checked first): the line-up and the second model check at any later call of the week, the repeats
only while Monday afternoon lasts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from adapters.wiring import Runtime
from domain.agent.agent_ports import GATEWAY_REFUSED
from domain.agent.lineup import ModelCheckResult
from domain.eventlog.commands import PublishWeek
from domain.week.publications import Publication
from domain.week.publishing import publish_week
from domain.week.weeks import LINEUP_AT, PUBLISH_AFTER, REPEAT_AT, REPEAT_UNTIL, previous_week, week_of, week_start
from workers.ledger import RunLedger
from workers.plan import Repeats, schedule_course, schedule_repeats
from workers.resources import resources_of

log = logging.getLogger("canitbuy.schedule")

LOOKBACK_WEEKS = 4
"""How far back an unpublished week is still published after downtime."""

Publish = Callable[[Runtime, str], Publication]
Preflight = Callable[[Sequence[str]], list[ModelCheckResult]]
"""A check of the line-up's models (`canitbuy models check`): one result per model it could ask."""


@dataclass
class CatchUp:
    lineup: list[UUID] = field(default_factory=list)
    repeats: list[UUID] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)
    """Line-up models the week's checks could not reach: not scheduled (yet, before the afternoon's check)."""

    @property
    def to_execute(self) -> list[UUID]:
        return [*self.lineup, *self.repeats]


def catch_up(
    runtime: Runtime, ledger: RunLedger, now: datetime, *, models: Sequence[str], publish: Publish | None,
    repeats: Repeats = 1, preflight: Preflight | None = None, flagships: Sequence[str] = (),
) -> CatchUp:
    """Do what the schedule says is due at `now` (synchronous: call it from a worker thread). `flagships` are
    the flagship line-up's models when the week is a flagship week (week_flagships), scheduled beside the rest.
    The line-up is scheduled at every call, for the models the week's checks have not found unavailable: a model
    the afternoon's check reaches gets its runs then (their ids are the same whenever they are made)."""
    done = CatchUp()
    week = week_of(now)
    since_monday = now - week_start(week)
    if since_monday >= LINEUP_AT:
        models = [*models, *(m for m in flagships if m not in models)]
        done.unavailable = _checked(runtime, week, models, preflight, afternoon=since_monday >= REPEAT_AT)
        serving = [m for m in models if m not in done.unavailable]
        done.lineup = schedule_course(runtime, week, serving, repeats=repeats, requested_by="scheduler")
    ledger.refresh()
    if REPEAT_AT <= since_monday < REPEAT_UNTIL:
        done.repeats = schedule_repeats(runtime, ledger, week, requested_by="scheduler")
        ledger.refresh()
    if publish is None:
        return done
    for candidate in _unpublished(runtime, ledger, week):
        settled = candidate != previous_week(week) or since_monday >= PUBLISH_AFTER
        if settled and not ledger.running(candidate):
            publish(runtime, candidate)
            done.published.append(candidate)
    return done


def _checked(runtime: Runtime, week: str, models: Sequence[str], preflight: Preflight | None, *,
             afternoon: bool) -> list[str]:
    """The week's unavailable models. The first check is made at the first call from Monday 06:00 UTC; from 14:00
    UTC the models it could not reach are checked once more, at a later call than the first check (after downtime
    that missed the morning, the call after it), so that one outage is not asked twice in the same minute. Each
    check is recorded once, so later calls, a restart or a replay ask nobody again."""
    lineup = runtime.record.lineup()
    if preflight is None:
        return lineup.unavailable(week)
    if not lineup.checked(week):
        results = preflight(models)
        if not results:
            return []
        runtime.record.record_models_checked(week, results)
        lineup = runtime.record.lineup()
        unavailable, refused = lineup.unavailable(week), lineup.refused(week)
        _log_unusable(week, results)
        if down := [m for m in unavailable if m not in refused]:
            log.warning("%s: not scheduled this morning, the gateway could not reach them (checked again at "
                        "14:00 UTC): %s", week, ", ".join(down))
        if refused:
            log.warning("%s: not scheduled this morning, the gateway refused our request for them: our "
                        "configuration (key, credits or route), not the models (checked again at 14:00 UTC): %s",
                        week, "; ".join(_refusals(refused, results)))
        return unavailable
    again = [m for m in lineup.to_check_again(week) if m in models] if afternoon else []
    if not again:
        return lineup.unavailable(week)
    results = preflight(again)
    runtime.record.record_models_checked(week, results, attempt=2)
    lineup = runtime.record.lineup()
    unavailable, refused = lineup.unavailable(week), lineup.refused(week)
    _log_unusable(week, results)
    answered = [m for m in again if m not in unavailable]
    if answered:
        log.warning("%s: answered the afternoon check, scheduled now: %s", week, ", ".join(answered))
    if down := [m for m in unavailable if m not in refused]:
        log.warning("%s: unreachable at both checks, no place this week: %s", week, ", ".join(down))
    if refused:
        log.warning("%s: the gateway refused our request for them at the afternoon check too: our configuration "
                    "(key, credits or route), not the models; no place this week: %s", week,
                    "; ".join(_refusals(refused, results)))
    return unavailable


def _refusals(models: Sequence[str], results: Sequence[ModelCheckResult]) -> list[str]:
    """Each refused model with the status the gateway answered, from this check (else the model alone)."""
    problems = {r.model: r.problem for r in results if r.gateway_refused}
    return [f"{m} ({problems[m].removeprefix(GATEWAY_REFUSED)})" if problems.get(m) else m for m in models]


def _log_unusable(week: str, results: Sequence[ModelCheckResult]) -> None:
    unusable = [f"{r.model} ({r.problem})" for r in results if r.available and r.problem]
    if unusable:
        log.warning("%s: scheduled, though the reply to the check held no valid action: %s", week,
                    "; ".join(unusable))


def _unpublished(runtime: Runtime, ledger: RunLedger, current: str) -> list[str]:
    """Weeks that are over (the newest LOOKBACK_WEEKS) with public runs and no final publication yet."""
    weeks, week = [], current
    for _ in range(LOOKBACK_WEEKS):
        week = previous_week(week)
        has_runs = any(r.week == week and r.org is None for r in ledger.runs.values())
        record = runtime.record.week_record(week) if has_runs else None
        if has_runs and (record is None or record.final is None):
            weeks.append(week)
    return sorted(weeks)


def publish(runtime: Runtime, week: str) -> Publication:
    """The core's use case, on the runtime's read models."""
    return publish_week(runtime.record, runtime.readmodels, PublishWeek(week=week, by="scheduler"))


def week_repeats(runtime: Runtime, week: str) -> dict[str, int]:
    """k per model as the line-up in force on the week's Monday sets it (staff set it per entrant); models not
    in the line-up (the built-in agents when no model key is configured) run once."""
    monday = week_start(week).date()
    return {e.model: e.repeats for e in runtime.record.lineup().active_on(monday)}


def flagship_week(week: str) -> bool:
    """The flagship line-up's schedule: the week whose Monday is the first Monday of its month."""
    return week_start(week).day <= 7


def week_flagships(runtime: Runtime, week: str) -> list[str]:
    """The flagship models a flagship week runs (none in other weeks, nor without a gateway key): the staff's
    non-weekly entrants in force on the Monday, else the code's FLAGSHIP line-up. They are recorded in the
    line-up (their labels say "flagship"), so the week's ranking and Matrix name them as such."""
    from adapters.models.lineup import FLAGSHIP

    if not flagship_week(week) or not runtime.settings.model_api_key:
        return []
    monday = week_start(week).date()
    lineup = runtime.record.lineup()
    chosen = [e for e in lineup.active_on(monday, weekly_only=False) if not e.weekly]
    if not chosen:
        chosen = [e for e in FLAGSHIP if e.since <= monday and (e.until is None or monday <= e.until)]
        runtime.record.set_entrants(chosen, by="scheduler")
    return [e.model for e in chosen]


def week_models(runtime: Runtime, week: str) -> list[str]:
    """The line-up in force on the week's Monday (built-in agents when no model key is configured)."""
    from workers.agents import default_models

    monday = week_start(week).date()
    return default_models(runtime.settings, runtime.record.lineup().active_on(monday))


def gateway_preflight(settings: object) -> Preflight | None:
    """The check through the gateway, when a key is configured (else the line-up is the built-in agents)."""
    from adapters.models.check import gateway_check

    return gateway_check(settings)


async def scheduled_catch_up(ctx: dict[str, Any], now: datetime) -> str:
    """The arq cron's and `week schedule`'s entry: catch up in a worker thread, then enqueue what is due. `now` is
    the runtime's clock as the caller read it (the arq cron reads the record's)."""
    import anyio.to_thread

    runtime = resources_of(ctx).runtime
    ledger: RunLedger = ctx.setdefault("ledger", RunLedger(runtime.record))

    def work() -> CatchUp:
        models = week_models(runtime, week_of(now))
        repeats = week_repeats(runtime, week_of(now))
        flagships = week_flagships(runtime, week_of(now))
        return catch_up(runtime, ledger, now, models=models, publish=publish, repeats=repeats,
                        preflight=gateway_preflight(runtime.settings), flagships=flagships)

    done = await anyio.to_thread.run_sync(work)
    unavailable = f", unavailable {', '.join(done.unavailable)}" if done.unavailable else ""
    return (f"{len(done.lineup)} line-up runs, {len(done.repeats)} repeats, published {done.published or 'none'}"
            f"{unavailable}")
