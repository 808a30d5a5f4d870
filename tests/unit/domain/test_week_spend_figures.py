"""The week's spend, figure by figure, from a log of runs: weekly and flagship models, ended runs and runs still to
start, a run that moved into the week when it started, and a private test that never counts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.agent.ports import StepRecord
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.eventlog.schema import Envelope, encode_payload, payload_decoder, public_name
from domain.projections.spend import SpendFold

MONDAY = datetime(2026, 11, 23, 9, tzinfo=UTC)  # 2026-W48
WEEK, LAST_WEEK = "2026-W48", "2026-W47"
ESTIMATES = {"m-weekly": 0.04, "m-flag": 0.3, "m-new": 0.25}
PASSED = Verdict(passed=True, outcome="passed", stage="entry", step=2)


def envelopes(runs: list[Run]) -> list[Envelope]:
    """The runs' events as the log gives them, in the order the runs were made."""
    found = []
    for run in runs:
        for event in run.collect_events():
            state = dict(vars(event))
            originator, version = str(state.pop("originator_id")), state.pop("originator_version")
            name = public_name(type(event))
            payload = payload_decoder(name).decode(encode_payload(state))
            found.append(Envelope(len(found) + 1, originator, version, name, payload))
    return found


def run(model: str, *costs: float, week: str = WEEK, end: str | None = None, started: bool = True,
        org: str | None = None) -> Run:
    at = MONDAY
    made = Run.schedule(station="s01", model=model, course_version="2.1", week=week, kind="browser",
                        requested_by="test", org=org, at=at - timedelta(days=1))
    if not started:
        return made
    made.start(worker="w", browser_version="b", agent_version="a", at=at)
    for number, cost in enumerate(costs, start=1):
        made.record_step(StepRecord(number=number, url="https://lab.test/", cost_usd=cost), at=at)
    if end == "finish":
        made.finish(PASSED, steps=len(costs), seconds=3.0, at=at)
    elif end == "cut":
        made.cut_short("model_connection", "gone", steps=len(costs), seconds=3.0, at=at)
    return made


def folded() -> SpendFold:
    fold = SpendFold.empty()
    fold.apply(envelopes([
        run("m-weekly", 0.01, 0.02, end="finish"),
        run("m-weekly", 0.005, end="cut"),
        run("m-weekly", started=False),
        run("m-weekly", 0.1, week=LAST_WEEK),  # scheduled for W47, started in W48: counts for W48
        run("m-weekly", 1.0, end="finish", org="acme"),  # a private test: never the week's
        run("m-flag", 0.5, end="finish"),
        run("m-flag", started=False),
        run("m-new", started=False),
    ]))
    return fold


def test_the_week_says_what_each_model_has_cost_and_will_cost():
    spend = folded().week(WEEK, cap_usd=0.1, estimate=ESTIMATES.__getitem__, flagship=lambda m: m == "m-flag",
                          flagship_cap_usd=2.0)
    by_model = {m.model: (m.flagship, m.runs_ended, m.runs_to_start, m.actual_usd, m.projected_usd)
                for m in spend.models}
    assert by_model == {
        "m-flag": (True, 1, 1, 0.5, 1.0),
        "m-new": (False, 0, 1, 0.0, 0.25),  # nothing ended yet: the line-up's estimate
        "m-weekly": (False, 2, 1, 0.135, 0.1525),  # each run to start at the average of the ended (0.0175)
    }
    assert (spend.actual_usd, spend.projected_usd, spend.cap_reached) == (0.135, 0.4025, True)
    assert (spend.flagship_actual_usd, spend.flagship_projected_usd, spend.flagship_cap_reached) == (0.5, 1.0, False)


def test_what_a_line_up_has_spent_counts_the_runs_that_started_in_the_week():
    fold = folded()
    assert fold.actual(WEEK) == 0.635
    assert fold.actual(WEEK, lambda model: model != "m-flag") == 0.135
    assert fold.actual(LAST_WEEK) == 0.0 and fold.week(LAST_WEEK, cap_usd=None, estimate=ESTIMATES.get).models == []
    assert fold.position == 23  # every event read, the private test's too
