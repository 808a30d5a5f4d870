"""What an ARC export says of each row (domain/leaderboards/arc_export.py): the rows outside our lab whose
`no_cart` only a person can turn into an outcome."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.agent.verdicts import Verdict
from domain.leaderboards.arc import ARC_TEST_SET, arc_100_v1
from domain.leaderboards.arc_batches import schedule_batch
from domain.leaderboards.arc_export import (
    REVIEWED_NOTES,
    RunEnd,
    submission_of,
    unreviewed,
)

AT = datetime(2026, 12, 7, 10, tzinfo=UTC)
NO_CART = Verdict(passed=False, outcome="stopped", stage="entry", step=2, arc="no_cart")


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
    assert document["run"]["notes"] == REVIEWED_NOTES.format(reviewed=2, rows=3)
    with pytest.raises(ValueError, match="needs no review"):  # code's blocked stands
        submission_of(batch, ends, reviewed={items[0].id: "no_cart", items[1].id: "added_to_cart",
                                             items[2].id: "no_cart"})
