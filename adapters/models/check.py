"""`canitbuy models check`: before a Monday, each line-up model answers one step through the gateway.

The request is a real step (the real prompt, tool schema, token limit and reasoning effort) on a small page of
two links; a model passes when the reply holds a valid action. The result names the model id the gateway says it
resolved, the time the call took and what it cost. A model is unavailable only when the connection to it failed
(refused, no answer in time, a 5xx or 429 after the client's retries): that is seen before the line-up starts, not
as one cut-short run per station. A gateway that refuses our request (an HTTP 4xx: a bad key, no credits, a wrong
route) is our configuration's problem: the model is not asked, so it is not scheduled either (each of its runs
would be cut short as our error at its first call) and is asked again at the Monday-afternoon check, but the check
says it is ours (`gateway_refused`), and the pages say so, never that the model could not be reached. A reply that
arrives is the model's answer: one without a valid action is flagged, yet the model stays available and answers
for its replies at the stations.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from adapters.models.agent import request_payload
from adapters.models.charges import charged
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import entrant
from adapters.models.prompt import messages
from adapters.models.replies import ReplyError, parse_reply
from domain.agent.agent_ports import GATEWAY_REFUSED, GatewayRefusalError, ModelConnectionError, Task
from domain.agent.lineup import Entrant, ModelCheckResult
from domain.agent.observation import Element, Observation

CHECK_PAGE = Observation(url="https://check.canitbuy.invalid/", title="All shoes", elements=[
    Element(id="e0", role="link", name="Fjord Trail Pro", href="https://check.canitbuy.invalid/products/fjord"),
    Element(id="e1", role="link", name="Aero Run 2", href="https://check.canitbuy.invalid/products/aero"),
])
CHECK_TASK = Task(kind="shop", text="Pick an in-stock product and open it.", start_url=CHECK_PAGE.url)


class ModelCheck(msgspec.Struct, frozen=True, kw_only=True):
    """One model's answer to the check (also the body of the scheduler's record of it)."""

    model: str
    route: str
    available: bool
    resolved: str = ""
    """The model id the gateway's reply names."""
    ms: int = 0
    cost_usd: float = 0.0
    problem: str = ""
    """What went wrong, in a few words: why it is not available, or that its reply held no valid action."""
    gateway_refused: bool = False
    """The gateway refused our request (HTTP 4xx): our configuration's problem, not the model's (not available)."""
    cost_estimated: bool = False
    """The reply held no usage we could read: cost_usd is our estimate of the prompt sent (charges.py)."""

    @property
    def passed(self) -> bool:
        return self.available and not self.problem


async def check_model(client: HttpxModelClient, entrant: Entrant) -> ModelCheck:
    payload = request_payload(entrant, messages(CHECK_PAGE, CHECK_TASK, []))
    began = time.monotonic()
    try:
        reply = await client.complete(payload)
    except ModelConnectionError as error:
        return ModelCheck(model=entrant.model, route=entrant.route, available=False,
                          ms=int((time.monotonic() - began) * 1000), problem=str(error))
    except GatewayRefusalError as error:
        # Our key, credits or route: the model was not asked, so it is not run, and the fault is ours, not its.
        return ModelCheck(model=entrant.model, route=entrant.route, available=False, gateway_refused=True,
                          ms=int((time.monotonic() - began) * 1000), problem=str(error))
    charge = charged(entrant, payload, reply.body)
    spent, estimated = charge.cost_usd, charge.estimated
    resolved = str(reply.body.get("model", "")) if isinstance(reply.body, dict) else ""
    try:
        parse_reply(reply.body)
    except ReplyError as error:
        # The model answered: a bad answer fails at the stations, on its own merits, not before the week.
        return ModelCheck(model=entrant.model, route=entrant.route, available=True, resolved=resolved,
                          ms=reply.ms, cost_usd=spent, cost_estimated=estimated, problem=f"unusable reply: {error}")
    return ModelCheck(model=entrant.model, route=entrant.route, available=True, resolved=resolved, ms=reply.ms,
                      cost_usd=spent, cost_estimated=estimated)


async def check_lineup(client: HttpxModelClient, entrants: list[Entrant]) -> list[ModelCheck]:
    return list(await asyncio.gather(*(check_model(client, e) for e in entrants)))


def report_lines(checks: list[ModelCheck]) -> list[str]:
    lines = []
    for c in checks:
        if c.gateway_refused:
            state = (f"REFUSED OUR REQUEST ({c.problem.removeprefix(GATEWAY_REFUSED)}: our "
                     "configuration, the key, credits or route, not the model; the scheduler does not run it)")
        elif not c.available:
            state = f"NOT AVAILABLE ({c.problem})"
        else:
            why = c.problem.removeprefix("unusable reply: ")
            state = f"available, but UNUSABLE REPLY ({why}; the scheduler still runs it)" if c.problem else "available"
        lines.append(f"{c.model:<20} {c.route:<32} {state}; resolved {c.resolved or '-'}; {c.ms} ms; "
                     f"${c.cost_usd:.6f}{' (estimated)' if c.cost_estimated else ''}")
    return lines


def as_result(check: ModelCheck) -> ModelCheckResult:
    return ModelCheckResult(model=check.model, available=check.available, resolved=check.resolved, ms=check.ms,
                            cost_usd=check.cost_usd, problem=check.problem, gateway_refused=check.gateway_refused,
                            cost_estimated=check.cost_estimated)


def gateway_check(settings: Any, *, timeout: float = 60.0, attempts: int = 2,
                  backoff: float = 1.0) -> Callable[[Sequence[str]], list[ModelCheckResult]] | None:
    """The scheduler's check through the configured gateway (the morning's, and the afternoon's of the models the
    morning could not reach); None without a key. Models that are not line-up models (the built-in agents) are not
    asked."""
    if not getattr(settings, "model_api_key", None):
        return None

    def check(models: Sequence[str]) -> list[ModelCheckResult]:
        entrants = [e for e in (entrant(m) for m in models) if e is not None]
        if not entrants:
            return []

        async def run() -> list[ModelCheck]:
            client = HttpxModelClient(settings.model_base_url, settings.model_api_key, timeout=timeout,
                                      attempts=attempts, backoff=backoff)
            try:
                return await check_lineup(client, entrants)
            finally:
                await client.aclose()

        return [as_result(c) for c in asyncio.run(run())]

    return check
