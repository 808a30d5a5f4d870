"""What an ARC export says of each row (domain/leaderboards/arc_export.py), from a run's own events: the outcome
(a run stopped with its command is `error`, not `not_attempted`), the screenshot that shows it, and the rows
outside our lab whose `no_cart` only a person can turn into an outcome."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.agent.ports import StepRecord
from domain.agent.runs import Run, ShownScreen
from domain.agent.verdicts import Verdict
from domain.leaderboards.arc import ARC_TEST_SET, COURSE_TEST_SET, arc_100_v1, course_test_set
from domain.leaderboards.arc_batches import schedule_batch
from domain.leaderboards.arc_export import (
    REVIEWED_NOTES,
    RunEnd,
    arc_outcome,
    arc_result,
    run_end,
    submission_of,
    unreviewed,
)

AT = datetime(2026, 12, 7, 10, tzinfo=UTC)
LAB = "http://s10.lab.localhost:8700"
CHECKOUT = Verdict(passed=True, outcome="passed", stage="checkout", step=3, arc="checkout_reached")
IN_CART = Verdict(passed=True, outcome="passed", stage="cart", step=4, arc="added_to_cart")
NO_CART = Verdict(passed=False, outcome="stopped", stage="entry", step=2, arc="no_cart")


def events_of(pages: list[tuple[str, str]], verdict: Verdict | None, final: str | None = None) -> list[Any]:
    """A run's events: a step a page (its address and screenshot), the verdict, then the kept screens (each step's
    screenshot, then `final`, the screen as the run left it)."""
    run = Run.schedule(station="s10", model="baseline-robust", course_version="2.1", week="2026-W50", kind="arc",
                       task="arc", requested_by="test", at=AT)
    run.start(worker="w", browser_version="chromium", agent_version="agent 1", at=AT)
    for number, (url, shot) in enumerate(pages, start=1):
        run.record_step(StepRecord(number=number, url=url, screenshot=shot), at=AT + timedelta(seconds=number))
    if verdict is not None:
        run.finish(verdict, steps=len(pages), seconds=30.0, at=AT + timedelta(seconds=60))
        screens = tuple(ShownScreen(screenshot=s, seconds=1.0) for s in [*(p[1] for p in pages), final] if s)
        run.keep_media(trace=None, trace_bytes=0, video=None, video_bytes=0, at=AT + timedelta(seconds=61),
                       screens=screens)
    return list(run.collect_events())


def evidence(events: list[Any], reviewed: str | None = None) -> str:
    row = schedule_batch(test_set=COURSE_TEST_SET, model="m", items=[(course_test_set().items[9], LAB)],
                         course_version="2.1", week="2026-W50", requested_by="test", at=AT)[0].rows[0]
    result = arc_result(row, run_end(events), course=reviewed is None, evidence_base="https://canitbuy.com",
                        reviewed=reviewed)
    return str(result["evidence_url"]).rsplit("/", 1)[-1]


PAGES = [(f"{LAB}/products/aero-run-2", "product"), (f"{LAB}/products/aero-run-2?size=42", "variant"),
         (f"{LAB}/cart", "cart"), (f"{LAB}/account/sign-in", "sign-in")]


def test_checkout_reached_shows_the_final_screen_not_the_page_before_the_last_action() -> None:
    assert evidence(events_of(PAGES[:3], CHECKOUT, final="checkout")) == "checkout"
    # A run whose final screen was not kept (no media) falls back to its last step's screenshot.
    assert evidence(events_of(PAGES[:3], CHECKOUT)[:-1]) == "cart"


def test_added_to_cart_shows_the_cart_page_whose_marker_credited_the_product() -> None:
    # s10: the cart at step 3, then the sign-in page the agent stopped on (the last screenshot).
    assert evidence(events_of(PAGES, IN_CART, final="sign-in")) == "cart"
    assert evidence(events_of([*PAGES[:3], (f"{LAB}/cart?need=point", "cart-2")], IN_CART, final="x")) == "cart-2"
    # No step saw the cart: the marker was read after the last action, on the screen the run ended on.
    assert evidence(events_of(PAGES[:2], IN_CART, final="cart-at-the-end")) == "cart-at-the-end"


def test_other_outcomes_show_the_last_screenshot_and_a_persons_success_the_final_screen() -> None:
    assert evidence(events_of(PAGES, NO_CART, final="end")) == "sign-in"
    assert evidence(events_of(PAGES, NO_CART, final="end"), reviewed="added_to_cart") == "end"
    assert evidence(events_of(PAGES, NO_CART, final="end"), reviewed="no_cart") == "sign-in"


@pytest.mark.parametrize(("end", "outcome"), [
    (None, "not_attempted"),
    (RunEnd(status="scheduled"), "not_attempted"),
    # Started, never ended: the command was stopped while it ran. ARC: "the agent's own run broke".
    (RunEnd(status="running", steps=3), "error"),
    (RunEnd(status="cut_short"), "error"),
])
def test_a_run_that_had_started_when_the_command_stopped_is_error(end: RunEnd | None, outcome: str) -> None:
    assert arc_outcome(end) == outcome


def test_a_started_runs_result_says_its_steps() -> None:
    events = events_of(PAGES[:2], None)
    row = schedule_batch(test_set=COURSE_TEST_SET, model="m", items=[(course_test_set().items[9], LAB)],
                         course_version="2.1", week="2026-W50", requested_by="test", at=AT)[0].rows[0]
    assert arc_result(row, run_end(events), course=True, evidence_base=None) == {
        "id": "s10", "outcome": "error", "steps": 2}


def test_no_cart_outside_the_lab_is_exported_only_with_a_persons_outcome() -> None:
    items = list(arc_100_v1().items)[:3]
    batch, runs = schedule_batch(test_set=ARC_TEST_SET, model="m", items=[(i, i.product_url) for i in items],
                                 course_version="2.1", week="2026-W50", requested_by="test", at=AT)
    verdicts = [NO_CART, Verdict(passed=False, outcome="stopped", arc="blocked"), NO_CART]
    ends = {str(run.id): RunEnd(status="finished", verdict=v, steps=2) for run, v in zip(runs, verdicts, strict=True)}
    assert unreviewed(batch, ends, {}) == [items[0].id, items[2].id]
    with pytest.raises(ValueError, match="review"):
        submission_of(batch, ends)
    document = submission_of(batch, ends, reviewed={items[0].id: "added_to_cart", items[2].id: "no_cart"})
    assert [r["outcome"] for r in document["results"]] == ["added_to_cart", "blocked", "no_cart"]
    assert document["run"]["notes"] == REVIEWED_NOTES.format(reviewed=2, rows=3, blocked=0)
    # code's blocked stands without a review, and a person may review it too: code can be wrong about a real store
    document = submission_of(batch, ends, reviewed={items[0].id: "no_cart", items[1].id: "added_to_cart",
                                                    items[2].id: "no_cart"})
    assert [r["outcome"] for r in document["results"]] == ["no_cart", "added_to_cart", "no_cart"]
    assert "3 of 3 results (every no_cart by code, 1 blocked by code) were reviewed" in document["run"]["notes"]


def test_error_and_not_attempted_outside_the_lab_and_every_course_row_stand_as_code_decided() -> None:
    items = list(arc_100_v1().items)[:2]
    batch, runs = schedule_batch(test_set=ARC_TEST_SET, model="m", items=[(i, i.product_url) for i in items],
                                 course_version="2.1", week="2026-W50", requested_by="test", at=AT)
    ends = {str(runs[0].id): RunEnd(status="cut_short", steps=1)}  # error; the second never started
    for row in items:
        with pytest.raises(ValueError, match="stands"):
            submission_of(batch, ends, reviewed={row.id: "added_to_cart"})
    course, course_runs = schedule_batch(test_set=COURSE_TEST_SET, model="m", items=[(course_test_set().items[9], LAB)],
                                         course_version="2.1", week="2026-W50", requested_by="test", at=AT)
    blocked = {str(course_runs[0].id): RunEnd(status="finished", verdict=Verdict(passed=False, outcome="stopped",
                                                                                 arc="blocked"))}
    with pytest.raises(ValueError, match="stands"):
        submission_of(course, blocked, reviewed={"s10": "added_to_cart"})
