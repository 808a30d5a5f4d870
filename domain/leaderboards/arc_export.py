"""A batch of ARC runs as an arc-leaderboard-submission/v1 object. Pure: the caller reads the runs.

Per row: a finished run gives the outcome its verdict names (`arc`); a run cut short by our error or the model's
connection is `error`, and so is a run that had started when the command was stopped (ARC: "the agent's own run
broke"; both are left out of n); a row whose run never started is `not_attempted`.

Outcomes outside our lab: code reads only the lab's cart and checkout markers, so on a real store a run it calls
`no_cart` may have put the product in the cart. Such a row is not a judged outcome: an ARC-100 batch is exported
only with the outcome a person gave each of them after reviewing the run's evidence (`reviewed`), and the run's
notes say how many. `blocked` outside our lab stands unless a person reviewed it too (code reads a real store's
challenge from its page, and may be wrong there); `error` and `not_attempted` are decided by code and stand. Course
batches (our lab, whose markers code reads) are exported as code judged them.

Evidence is a screenshot, addressed under the site's public https base when one is configured (else left out):
for `checkout_reached` the run's final screen (the screen as the run left it, the last of Run.MediaKept's
screens: a step's screenshot is taken before its action, so no step shows the checkout); for `added_to_cart`
decided by code, the newest step observed on the lab's cart page (`/cart`, the one page showing the cart marker
that credited the product), else the final screen; for an outcome a person gave, the final screen; otherwise
the last step's screenshot. Course rows that reached a checkout carry the lab's receipt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import msgspec

from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.leaderboards.arc import COURSE_TEST_SET, SPEC, SUCCESS
from domain.leaderboards.arc_batches import ArcBatch, ArcRow

BUILDER = "CanItBuy"
NOTES = (
    "CanItBuy harness: headless Chromium driven step by step (at most 16 steps and 150 s a store), one attempt "
    "per store, stopped before payment. Outcomes decided by code: the lab's cart and checkout markers; on stores "
    "without them only blocked or no_cart can be told. Stores unreachable from our machine are error (ours)."
)
REVIEWED_NOTES = (
    "CanItBuy harness: headless Chromium driven step by step (at most 16 steps and 150 s a store), one attempt "
    "per store, stopped before payment. Code cannot read a real store's cart: {reviewed} of {rows} results "
    "(every no_cart by code, {blocked} blocked by code) were reviewed by a person from the run's evidence, who "
    "gave their outcome. Other blocked (HTTP 401/403/429 or a challenge page), error (ours, stores unreachable "
    "from our machine included) and not_attempted were decided by code."
)
LAB_CART_PATH = "/cart"
"""The lab's cart page, the one page showing its cart marker (`#nordlys-cart`)."""


class RunEnd(msgspec.Struct, frozen=True, kw_only=True):
    """What an export needs of one run, read from its events."""

    status: str
    """scheduled, running, finished or cut_short."""
    verdict: Verdict | None = None
    steps: int = 0
    seconds: float | None = None
    ended_at: datetime | None = None
    agent_version: str | None = None
    screenshot: str | None = None
    """sha256 of the run's last step screenshot in the blob store (taken before that step's action)."""
    final_screen: str | None = None
    """sha256 of the screen as the run left it (the last of Run.MediaKept's screens), when it was kept."""
    cart_screenshot: str | None = None
    """sha256 of the screenshot of the newest step observed on the lab's cart page."""
    reason: str = ""
    """The verdict's reason, or why the run was cut short (for people; ARC's format has no field for it)."""


def run_end(events: Sequence[Any]) -> RunEnd | None:
    """What a run ended with, from its events (Run.Scheduled first); None for no run, or a private one."""
    if not events or not isinstance(events[0], Run.Scheduled) or events[0].org is not None:
        return None
    end = RunEnd(status="scheduled")
    for event in events[1:]:
        match event:
            case Run.Started(agent_version=version):
                end = msgspec.structs.replace(end, status="running", agent_version=version)
            case Run.StepRecorded(step=step):
                on_cart = bool(step.screenshot) and urlsplit(step.url).path.rstrip("/") == LAB_CART_PATH
                end = msgspec.structs.replace(end, steps=end.steps + 1, screenshot=step.screenshot or end.screenshot,
                                              cart_screenshot=step.screenshot if on_cart else end.cart_screenshot)
            case Run.MediaKept(screens=screens) if screens:
                end = msgspec.structs.replace(end, final_screen=screens[-1].screenshot)
            case Run.Finished(verdict=verdict, steps=steps, seconds=seconds):
                end = msgspec.structs.replace(end, status="finished", verdict=verdict, steps=steps, seconds=seconds,
                                              ended_at=event.timestamp, reason=verdict.reason)
            case Run.CutShort(detail=detail, seconds=seconds):
                end = msgspec.structs.replace(end, status="cut_short", seconds=seconds, ended_at=event.timestamp,
                                              reason=detail)
    return end


def moment(at: datetime) -> str:
    """ARC's date-time form: UTC, whole seconds, Z."""
    return at.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def arc_outcome(end: RunEnd | None) -> str:
    """The outcome code gives the row: `not_attempted` when its run never started, `error` when it was cut
    short or had started when the command was stopped (it never ended), else its verdict's."""
    if end is None or end.status == "scheduled":
        return "not_attempted"
    if end.status in ("cut_short", "running"):
        return "error"
    return (end.verdict.arc if end.verdict else None) or "no_cart"


def needs_review(end: RunEnd | None, *, course: bool) -> bool:
    """Whether the row's outcome is for a person to give: `no_cart` by code on a store outside our lab, where
    code cannot read the cart."""
    return not course and arc_outcome(end) == "no_cart"


def may_review(end: RunEnd | None, *, course: bool) -> bool:
    """Whether a person may give the row's outcome: every row that needs review, and `blocked` by code outside our
    lab, which stands without one."""
    return needs_review(end, course=course) or (not course and arc_outcome(end) == "blocked")


def unreviewed(batch: ArcBatch, ends: Mapping[str, RunEnd], reviewed: Mapping[str, str]) -> list[str]:
    """The ids of the rows that need a person's review and have none in `reviewed`."""
    course = batch.test_set == COURSE_TEST_SET
    return [row.id for row in batch.rows
            if needs_review(ends.get(row.run_id), course=course) and row.id not in reviewed]


def evidence_of(end: RunEnd, outcome: str, *, by_person: bool) -> str | None:
    """The screenshot that shows the outcome (see the module's docstring)."""
    if outcome == "checkout_reached" or (by_person and outcome in SUCCESS):
        return end.final_screen or end.screenshot
    if outcome == "added_to_cart":
        return end.cart_screenshot or end.final_screen or end.screenshot
    return end.screenshot


def arc_result(row: ArcRow, end: RunEnd | None, *, course: bool, evidence_base: str | None,
               reviewed: str | None = None) -> dict[str, Any]:
    """The row's result; `reviewed` is the outcome a person gave it (only for a row that needs review)."""
    result: dict[str, Any] = {"id": row.id, "outcome": reviewed or arc_outcome(end)}
    if end is None or end.status == "scheduled":
        return result
    if end.ended_at is not None:
        result["at"] = moment(end.ended_at)
    result["steps"] = end.steps
    if end.seconds is not None:
        result["seconds"] = round(end.seconds, 1)
    evidence = evidence_of(end, result["outcome"], by_person=reviewed is not None)
    if evidence_base and evidence:
        result["evidence_url"] = f"{evidence_base.rstrip('/')}/runs/{row.run_id}/blobs/{evidence}"
    if course and end.verdict is not None and end.verdict.receipt:
        result["receipt"] = end.verdict.receipt
    return result


def agent_name(model: str) -> str:
    return f"CanItBuyAgent ({model})"[:60]


def submission_of(
    batch: ArcBatch, ends: Mapping[str, RunEnd], *, evidence_base: str | None = None,
    reviewed: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The submission for the batch; `ends` maps run ids to what their runs ended with, `reviewed` row ids to the
    outcome a person gave them. Every row that needs review must have one (`unreviewed` is empty): the caller
    checks, and this refuses to print a machine `no_cart` from a real store as an outcome."""
    course = batch.test_set == COURSE_TEST_SET
    reviewed = reviewed or {}
    missing = unreviewed(batch, ends, reviewed)
    if missing:
        raise ValueError(f"rows need a person's review: {', '.join(missing)}")
    given = {row.id: reviewed.get(row.id) if may_review(ends.get(row.run_id), course=course) else None
             for row in batch.rows}
    if any(row_id not in given or given[row_id] is None for row_id in reviewed):
        raise ValueError("a reviewed outcome was given for a row whose outcome code decided and stands")
    blocked = sum(arc_outcome(ends.get(row.run_id)) == "blocked" for row in batch.rows if row.id in reviewed)
    versions = sorted({e.agent_version for e in ends.values() if e.agent_version})
    agent: dict[str, Any] = {"name": agent_name(batch.model), "path": "browser", "model": batch.model[:80],
                             "builder": BUILDER}
    if versions:
        agent["version"] = versions[-1][:40]
    ended = [e.ended_at for e in ends.values() if e.ended_at is not None]
    finished = batch.finished_at or (max(ended) if ended else batch.started_at)
    notes = NOTES if course else REVIEWED_NOTES.format(reviewed=len(reviewed), rows=len(batch.rows), blocked=blocked)
    return {
        "spec": SPEC,
        "test_set": batch.test_set,
        "agent": agent,
        "run": {"started_at": moment(batch.started_at), "finished_at": moment(finished),
                "stopped_before_payment": True, "notes": notes},
        "results": [arc_result(row, ends.get(row.run_id), course=course, evidence_base=evidence_base,
                               reviewed=given[row.id]) for row in batch.rows],
    }
