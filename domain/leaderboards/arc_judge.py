"""ARC's task and its judge: "Add this product to the cart: <product_url>", outcomes in ARC's terms.

Pure, like the course's judge beside it, and decided by code from what the page shows, never from the model:
- `checkout_reached`: the lab's checkout marker is open (with the product in the order when the order is shown);
- `added_to_cart`: the newest cart marker (`#nordlys-cart`) the run read holds the product (any colour or size:
  ARC accepts "the closest in-stock variant");
- `blocked`: the run ended on a page that refuses it (HTTP 401/403/429) or on a challenge page (`is_blocked`): a
  captcha or human check standing in the way, never a notice such as "This site is protected by reCAPTCHA";
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
from domain.agent.judge import infer_stage, order_of
from domain.agent.observation import Observation, PageProbe
from domain.agent.verdicts import OrderSummary, Outcome, Verdict

ARC_TASK = "Add this product to the cart: {product_url}"
BLOCKING_STATUS = frozenset({401, 403, 429})
"""Statuses that refuse the agent (ARC: "HTTP 403"), whatever the page says."""
CHALLENGE_STATUS = 503
"""A challenge served as 503 (a bot wall's "checking your browser"); a 503 that asks for nothing is an outage."""
_YOU = r"(?:you are|you're|you\u2019re)"
_CHALLENGE = re.compile(
    rf"captcha|are you a (?:robot|human)|not a robot|(?:verify|prove|confirm) (?:that )?{_YOU} (?:a )?human|"
    r"human verification|checking (?:your browser|if the site connection is secure)|security check|"
    r"bot (?:check|gate|verification)|verification (?:page|required)|press (?:&|and) hold",
    re.IGNORECASE,
)
"""Words of a page that asks for proof of a human."""
_NOTICE = re.compile(
    r"[^.\n]*\bprotected by (?:google )?(?:re|h)?captcha\b[^.\n]*\.?|\b(?:re|h)captcha\s*privacy\s*[-\u2013]\s*terms",
    re.IGNORECASE,
)
"""A captcha provider's notice ("This site is protected by reCAPTCHA and the Google Privacy Policy and Terms of
Service apply."; the badge's "reCAPTCHA Privacy - Terms"): on ordinary pages of many stores, never in the way."""
OPENING = 600
"""Characters of visible text that open the page: where a challenge that stands in the way is read."""
INTERSTITIAL = 1000
"""A page with less visible text than this is all opening: an interstitial, read whole."""


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
    """The store stopped the agent: a refusing status, or a challenge page (`challenge`)."""
    return observation.status in BLOCKING_STATUS or challenge(observation) is not None


def challenge(observation: Observation) -> str | None:
    """The words with which the page asks for proof of a human where they stand in the way, else None: in its
    title, in an open modal dialog's name or in the text that opens the page; anywhere in the text of an
    interstitial (a short page) or of a 503. A captcha provider's notice is not read. The observation lists no
    frames (observe.js, part of the agent release), so a widget is known by its page's words, not its iframe."""
    text = _NOTICE.sub(" ", observation.text[:2000])
    whole = observation.status == CHALLENGE_STATUS or len(observation.text.strip()) < INTERSTITIAL
    places = [_NOTICE.sub(" ", observation.title), *(d.name for d in observation.dialogs if d.modal),
              text if whole else text[:OPENING]]
    found = next((m for place in places if (m := _CHALLENGE.search(place))), None)
    return found.group(0) if found else None


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
        why = (f"HTTP {observation.status}" if observation.status in BLOCKING_STATUS
               else f"a challenge page ({challenge(observation)!r})")
        return Verdict(passed=False, outcome=ended, stage="entry", step=step, arc="blocked",
                       reason=f"the store blocked the agent: {why}")
    return Verdict(passed=False, outcome=ended, stage=stage, step=step, arc="no_cart",
                   reason=f"the product did not reach a cart code can read: {reason}")
