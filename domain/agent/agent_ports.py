"""The ports the agent's run loop needs: a browser, an agent that decides, a reader. Adapters implement them."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import msgspec

from domain.agent.actions import Action
from domain.agent.observation import Observation, PageProbe
from domain.agent.ports import StepRecord
from domain.agent.verdicts import FetchedPage, ReadAnswer
from domain.courses.course import CourseSpec
from domain.courses.tasks import task_for, task_text

TaskKind = Literal["shop", "shop_brief", "read", "arc"]


class Task(msgspec.Struct, frozen=True, kw_only=True):
    """What the agent is asked to do. It carries the task text, never the station's code or obstacle."""

    kind: TaskKind
    text: str
    """The words the agent gets: the shop task, with the shopper's brief appended in s15..s18."""
    start_url: str
    """The store's listing page; for ARC's task, the product page it names."""
    max_total_cents: int | None = None
    """The brief's limit incl. delivery, for the judge; agents read the limit from `text`."""


BRIEF_LIMIT_CENTS = 15000


def station_task(course: CourseSpec, code: str, start_url: str) -> Task:
    """The task a station sets (read, shop, or shop with the shopper's brief), with the words the agent gets."""
    kind = task_for(course.station(code))
    limit = BRIEF_LIMIT_CENTS if kind == "shop_brief" else None
    return Task(kind=kind, text=task_text(course, kind), start_url=start_url, max_total_cents=limit)


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """An agent's choice for one step. `action` is None when the reply was not a valid action."""

    action: Action | None
    notes: str = ""
    error: str = ""
    """Why there is no action (a malformed reply), recorded as the step's result."""
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    """Of tokens_out, those the model spent reasoning."""
    tokens_cached: int = 0
    """Of tokens_in, those read from the provider's cache."""
    cost_usd: float = 0.0
    model_ms: int = 0
    exchange: str | None = None
    """sha256 of the model exchange in the blob store (the prompt as sent, the raw reply); None for agents
    without a model."""
    estimated: bool = False
    """The call's usage could not be read (a 200 reply that is no completion with a usage object, a call dropped
    when the run's time ran out): tokens_in and cost_usd are our estimate of the prompt sent (StepRecord.estimated)."""


class BudgetCutError(RuntimeError):
    """Our token limit cut the model's reply before it held an action (a reader's, before it held an answer): our
    error, since the limit is ours, never the model's. The run is cut short, and its detail is this error's words.

    The provider charged for the call all the same: `spent` is its usage and exchange (a decision with no action),
    which the run records as a step whose result is CUT_RESULT (a reader's: READ_CUT_RESULT) before it is cut
    short, so the week's spend and its cap count the call. None when no call was made to be charged for."""

    def __init__(self, message: str, *, spent: Decision | None = None) -> None:
        super().__init__(message)
        self.spent = spent


CUT_RESULT = "reply cut by our token limit: no action"
"""The result of a browser step whose reply our token limit cut before it held an action: the run is cut short
there (our error), and the step is recorded for the call's tokens and cost."""
READ_CUT_RESULT = "reply cut by our token limit: no answer"
"""The result of a reader's step whose reply our token limit cut before it held an answer (as CUT_RESULT)."""


class ModelConnectionError(RuntimeError):
    """The model could not be reached after retries: the run is cut short, which is not a result."""


GATEWAY_REFUSED = "the gateway refused our request: "
"""How a gateway refusal's words begin (GatewayRefusalError); what follows is the status, "HTTP 401"."""


class GatewayRefusalError(RuntimeError):
    """The gateway refused our request with an HTTP 4xx it is not retried for (401 a bad key, 402 no credits, 403,
    404 a wrong route, 400 a request it will not take): our configuration's error, neither the model's nor the
    connection's. The run is cut short as our error with these words (never `model_connection`), and the model
    check reports it as ours, not the model as unavailable. Not a ModelConnectionError, so nothing that handles a
    failed connection takes it for one."""

    def __init__(self, status: int) -> None:
        super().__init__(f"{GATEWAY_REFUSED}HTTP {status}")
        self.status = status


@runtime_checkable
class ModelLink(Protocol):
    """An agent that calls a model over the network says whether the call in flight is failing, and how long its
    calls have waited for our own limit on calls at once.

    The run's time can run out in the middle of a model call. When that call has already met a failure (a
    transport error, an attempt that timed out, a 5xx or 429 being retried), the time went to the connection, not
    to the model: the run is cut short for `model_connection`. A call that is merely slow is the model's time.
    A call waiting for a free place under our own limit on calls at once to its provider is neither: the run's
    clock does not count that wait in the run's seconds (see `domain.agent.episode`). A call dropped when the time
    ran out is recorded as the step it was, at our estimate of what it may have cost (`dropped_call`).
    """

    def connection_trouble(self) -> str | None:
        """The last failure of the model call in flight, or None when it has met none (or none is in flight)."""
        ...

    def our_wait(self) -> float:
        """Seconds this agent's calls have waited so far for a free place under our own limit on calls at once
        (CANITBUY_PROVIDER_CONCURRENCY), a wait in progress included: our throttling, not the model's time."""
        ...

    def dropped_call(self) -> Decision | None:
        """The call dropped when the run's time ran out, as the step records it: when its request was on its way
        (sent, no answer read), the provider may charge for it and reports no usage, so it is our estimate of the
        prompt's input tokens and their cost, marked estimated; None when no request was on its way."""
        ...


class BrowserSession(Protocol):
    """One run's browser context on one store; only that store's host is reachable."""

    async def open(self, url: str) -> None:
        """Load the first page (not a step)."""
        ...

    async def observe(self) -> Observation:
        """Screenshot, element list, dialogs and visible text of the current page, read in one call."""
        ...

    async def probe(self) -> PageProbe:
        """The judge's read of the page (checkout marker and order); never given to the agent."""
        ...

    async def act(self, action: Action, observation: Observation) -> str:
        """Carry the action out; return "ok" or a short, clear result such as "blocked: ..."."""
        ...

    async def close(self) -> None: ...


class Browser(Protocol):
    version: str

    async def session(self, store_url: str) -> BrowserSession:
        """A fresh context for one run on the store at `store_url`."""
        ...


class Agent(Protocol):
    """Decides one action from what the page shows. Built-in agents and model-driven agents alike."""

    name: str
    version: str

    async def decide(self, observation: Observation, task: Task, history: list[StepRecord]) -> Decision: ...


class ReadResult(msgspec.Struct, frozen=True, kw_only=True):
    """A reader's answer and what it took: the pages it fetched, and the model's usage when one was asked."""

    answer: ReadAnswer
    pages: list[str] = []
    """The addresses read, in order."""
    fetched: list[FetchedPage] = []
    """Every request made, in order, with its status and the body's sha256 (recorded with the verdict)."""
    notes: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    """Of tokens_out, those the model spent reasoning."""
    tokens_cached: int = 0
    """Of tokens_in, those read from the provider's cache."""
    cost_usd: float = 0.0
    model_ms: int = 0
    exchange: str | None = None
    """sha256 of the model exchange in the blob store (the request as sent, the raw reply); None when no model was
    asked (the built-in reader). A run whose reader asked a model records the call as its one step, with this
    usage, as a browser run records each of its calls (`as_step`)."""
    estimated: bool = False
    """The reply held no usage we could read: tokens_in and cost_usd are our estimate of the prompt sent."""

    def as_step(self, url: str, *, duration_ms: int) -> StepRecord | None:
        """The model's call as the run's step 1 (its tokens, cost and exchange, so the week's spend and its cap
        count it as they count a browser run's steps); None when no model was asked."""
        if self.exchange is None:
            return None
        return StepRecord(number=1, url=url, notes=self.notes, result=READ_RESULT, duration_ms=duration_ms,
                          model_ms=self.model_ms, tokens_in=self.tokens_in, tokens_out=self.tokens_out,
                          cost_usd=self.cost_usd, tokens_reasoning=self.tokens_reasoning,
                          tokens_cached=self.tokens_cached, exchange=self.exchange, estimated=self.estimated)


def read_cut_step(spent: Decision, url: str, *, duration_ms: int) -> StepRecord:
    """A reader's call that our token limit cut before it held an answer, as the run's step 1: the run is cut short
    (our error), and the step keeps the call's tokens, cost and exchange for the week's spend and its cap."""
    return StepRecord(number=1, url=url, notes=spent.notes, result=READ_CUT_RESULT, duration_ms=duration_ms,
                      model_ms=spent.model_ms, tokens_in=spent.tokens_in, tokens_out=spent.tokens_out,
                      cost_usd=spent.cost_usd, tokens_reasoning=spent.tokens_reasoning,
                      tokens_cached=spent.tokens_cached, exchange=spent.exchange, estimated=spent.estimated)


READ_RESULT = "answered"
"""The result of a reader's step: it read the pages and answered (the judge grades the answer)."""


class Reader(Protocol):
    """Answers the read task from the store's pages without running JavaScript."""

    async def read(self, task: Task) -> ReadResult:
        """The answer with what it took (pages fetched, model usage), for the recording."""
        ...

    async def answer(self, task: Task) -> ReadAnswer:
        """The answer alone, for the judge."""
        ...
