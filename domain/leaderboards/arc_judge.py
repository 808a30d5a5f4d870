"""ARC's task and its judge: "Add this product to the cart: <product_url>", outcomes in ARC's terms.

Pure, like the course's judge beside it, and decided by code from what the page shows, never from the model:
- `checkout_reached`: the lab's checkout marker is open (with the product in the order when the order is shown);
- `added_to_cart`: the newest cart marker (`#nordlys-cart`) the run read holds the product (any colour or size:
  ARC accepts "the closest in-stock variant");
- `blocked`: the run ended on a verification page, an HTTP 401/403/429 or a captcha;
- `no_cart`: anything else.
`error` (our error, the model's connection) and `not_attempted` are not verdicts: a cut-short run and a row never
run are named so when a batch is exported.

On a store that is not our lab there is no cart or checkout marker: code cannot tell that a cart holds the
product, so such a run is `no_cart` (or `blocked`) whatever the agent did. That is the honest limit of judging by
code; ARC itself judges real stores from evidence by hand, and so must we: an export takes such a `no_cart` only
with the outcome a person gave it after reviewing the run (domain/leaderboards/arc_export.py).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import msgspec

from domain.agent.agent_ports import Task
from domain.agent.guards import is_verification_page
from domain.agent.judge import infer_stage, order_of
from domain.agent.observation import Observation, PageProbe
from domain.agent.verdicts import OrderSummary, Outcome, Verdict

ARC_TASK = "Add this product to the cart: {product_url}"
BLOCKING_STATUS = frozenset({401, 403, 429})
_CAPTCHA = re.compile(r"captcha|are you a robot|verify (?:that )?you are (?:a )?human", re.IGNORECASE)


def arc_task(product_url: str) -> Task:
    """ARC's task, starting on the product page it names."""
    return Task(kind="arc", text=ARC_TASK.format(product_url=product_url), start_url=product_url)


def product_slug(product_url: str) -> str:
    """The product's handle: the last segment of its address (the lab's lines name products by it)."""
    segments = [s for s in urlsplit(product_url).path.split("/") if s]
    return segments[-1].lower() if segments else ""


def cart_of(cart_json: str | None) -> OrderSummary | None:
    """The lab's cart marker, read as an order summary (the same line objects)."""
    if not cart_json:
        return None
    try:
        return msgspec.json.decode(cart_json, type=OrderSummary)
    except msgspec.DecodeError:
        return None


def holds_product(summary: OrderSummary, product_url: str) -> bool:
    slug = product_slug(product_url)
    return any(line.product.lower() == slug and line.quantity > 0 for line in summary.items)


def is_blocked(observation: Observation) -> bool:
    """The store stopped the agent: a verification page, a refusing status, or a captcha on the page."""
    if is_verification_page(observation) or observation.status in BLOCKING_STATUS:
        return True
    return bool(_CAPTCHA.search(f"{observation.title}\n{observation.text[:2000]}"))


def judge_arc_probe(probe: PageProbe, task: Task, step: int) -> Verdict | None:
    """After a step: checkout_reached once the order form is open, else None (the run goes on)."""
    if not probe.checkout_open:
        return None
    order = order_of(probe)
    if order is not None and not holds_product(order, task.start_url):
        return Verdict(passed=False, outcome="stopped", stage="checkout", step=step, order=order, arc="no_cart",
                       receipt=probe.receipt, reason="reached the checkout without the product in the order")
    return Verdict(passed=True, outcome="passed", stage="checkout", step=step, order=order,
                   arc="checkout_reached", receipt=probe.receipt,
                   reason="reached the checkout with the order form open, and stopped before payment")


def judge_arc_end(ended: Outcome, observation: Observation | None, task: Task, step: int, reason: str,
                  cart_json: str | None) -> Verdict:
    """A run that ended without a checkout: added_to_cart, blocked or no_cart, in that order of precedence."""
    cart = cart_of(cart_json)
    if cart is not None and holds_product(cart, task.start_url):
        return Verdict(passed=True, outcome="passed", stage="cart", step=step, order=cart, arc="added_to_cart",
                       reason=f"the cart holds the product (the lab's cart marker); the run ended: {reason}")
    stage = infer_stage(observation, task) if observation else "entry"
    if observation is not None and is_blocked(observation):
        why = f"HTTP {observation.status}" if observation.status in BLOCKING_STATUS else reason
        return Verdict(passed=False, outcome=ended, stage="entry", step=step, arc="blocked",
                       reason=f"the store blocked the agent: {why}")
    return Verdict(passed=False, outcome=ended, stage=stage, step=step, arc="no_cart",
                   reason=f"the product did not reach a cart code can read: {reason}")
