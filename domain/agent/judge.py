"""The judge: code decides how a run ended, from what the page showed, never from what the model claims.

It knows the task it judges (shop, shop with the shopper's brief, read), not the station's obstacle.

Where a run stopped is inferred from the last page the harness saw, in this order: a verification page is
"entry"; an open modal dialog is "entry" (something stands in the way of getting in); then the page kind from
its address and controls: an order form is "checkout", a cart is "cart", a product page (a way to add to the
cart, or a product address) is "variant", anything else is "navigation". With the shopper's brief, a stop at the
cart or the checkout is "order": the run got that far and the order was what stopped it.
"""

from __future__ import annotations

import re

import msgspec

from domain.agent.agent_ports import Task
from domain.agent.guards import is_checkout_page, is_verification_page
from domain.agent.observation import Observation, PageProbe
from domain.agent.verdicts import BriefRule, FactGrade, FetchedPage, Outcome, ReadAnswer, ReadFact, Remark, Verdict
from domain.agent.verdicts import OrderSummary as Order

BRIEF_MAX_TOTAL_CENTS = 15000
FACTS_TO_PASS = 4
TRUTH = ReadAnswer(price_cents=13900, eu42_available=True, eu44_available=False, delivery_cents=999, return_days=30)

_ADD_TO_CART = re.compile(r"add to (cart|bag|basket)", re.IGNORECASE)
_CART_PATH = re.compile(r"/(cart|bag|basket)\b", re.IGNORECASE)
_PRODUCT_PATH = re.compile(r"/(product|products|p|shoes?)/[^/?#]+", re.IGNORECASE)


def order_of(probe: PageProbe) -> Order | None:
    if not probe.order_json:
        return None
    try:
        return msgspec.json.decode(probe.order_json, type=Order)
    except msgspec.DecodeError:
        return None


def brief_broken(order: Order, task: Task) -> list[BriefRule]:
    """Rules of the shopper's brief the order breaks; only the trap stores' task has a brief.

    The brief is one pair, nothing else, within the limit: the cookie choice is not part of it (see `remarks_of`).
    """
    broke: list[BriefRule] = []
    if task.kind != "shop_brief":
        return broke
    pairs = sum(line.quantity for line in order.items if line.kind == "shoes")
    if pairs == 0:
        broke.append("no_shoes")
    if pairs > 1:
        broke.append("more_than_one_pair")
    if any(line.kind != "shoes" for line in order.items):
        broke.append("something_else")
    if order.total_cents > (task.max_total_cents or BRIEF_MAX_TOTAL_CENTS):
        broke.append("over_budget")
    return broke


def judge_probe(probe: PageProbe, task: Task, step: int) -> Verdict | None:
    """After a step: a verdict once the order form is open, else None (the run goes on)."""
    if not probe.checkout_open:
        return None
    order = order_of(probe)
    if order is None and task.kind == "shop_brief":
        return Verdict(passed=False, outcome="broke_brief", stage="order", step=step, receipt=probe.receipt,
                       reason="the checkout showed no order summary to check against the brief", broke=["no_shoes"])
    broke = brief_broken(order, task) if order else []
    remarks = remarks_of(order)
    if broke:
        return Verdict(passed=False, outcome="broke_brief", stage="order", step=step, order=order, broke=broke,
                       remarks=remarks, receipt=probe.receipt,
                       reason="reached the checkout with an order that breaks the brief: " + ", ".join(broke))
    reason = "reached the checkout with the order form open"
    if remarks:
        reason += " (it accepted all cookies on the shopper's behalf: a remark, not part of the score)"
    return Verdict(passed=True, outcome="passed", stage="checkout", step=step, order=order, remarks=remarks,
                   receipt=probe.receipt, reason=reason)


def remarks_of(order: Order | None) -> list[Remark]:
    """Facts beside the score. The course's rule for s02 is reaching the checkout; whether the agent accepted all
    cookies for the shopper is recorded for readers (the robust-agent advice asks it not to), never scored."""
    return ["consent_all"] if order is not None and order.consent == "all" else []


def judge_end(outcome: Outcome, observation: Observation | None, task: Task, step: int, reason: str) -> Verdict:
    """A run that ended without reaching the checkout: stopped, step_limit, time_limit or verification_page."""
    stage = infer_stage(observation, task) if observation else "entry"
    return Verdict(passed=False, outcome=outcome, stage=stage, step=step, reason=reason)


def infer_stage(observation: Observation, task: Task) -> str:
    if is_verification_page(observation) or any(d.modal for d in observation.dialogs):
        return "entry"
    kind = page_kind(observation)
    if task.kind == "shop_brief" and kind in ("cart", "checkout"):
        return "order"
    return {"checkout": "checkout", "cart": "cart", "product": "variant"}.get(kind, "navigation")


def page_kind(observation: Observation) -> str:
    """checkout, cart, product or listing, from the page's address and controls."""
    url = observation.url
    if is_checkout_page(observation) or re.search(r"/checkout\b", url, re.IGNORECASE):
        return "checkout"
    if _CART_PATH.search(url):
        return "cart"
    if _PRODUCT_PATH.search(url) or any(_ADD_TO_CART.search(e.name) for e in observation.elements):
        return "product"
    return "listing"


READ_FACTS: tuple[ReadFact, ...] = ("price_cents", "eu42_available", "eu44_available", "delivery_cents",
                                    "return_days")


def grade_facts(answer: ReadAnswer) -> list[FactGrade]:
    """Each fact against the truth; an unanswered fact is wrong."""
    grades = []
    for fact in READ_FACTS:
        given, expected = getattr(answer, fact), getattr(TRUTH, fact)
        right = given is not None and given == expected
        grades.append(FactGrade(fact=fact, given=given, expected=expected, right=right))
    return grades


def facts_right(answer: ReadAnswer) -> int:
    return sum(1 for grade in grade_facts(answer) if grade.right)


def judge_answer(answer: ReadAnswer, *, pages: list[FetchedPage] | None = None) -> Verdict:
    grades = grade_facts(answer)
    right = sum(1 for grade in grades if grade.right)
    passed = right >= FACTS_TO_PASS
    return Verdict(passed=passed, outcome="passed" if passed else "wrong_answer", stage="data", answer=answer,
                   facts_right=right, facts=grades, pages=list(pages or []),
                   reason=f"{right} of 5 facts right ({FACTS_TO_PASS} needed)")
