"""One browser run: observe → decide → guard → act → judge → record, within 16 steps and 150 seconds.

The clock is injected so the limits are testable; the ports do the I/O. The caller records `started` (it
knows the worker and versions) and closes the session; the episode records every step and how the run ended.
The judge reads the page after every step, a stop included; a run ends as soon as the order form is open. A reply
our token limit cut before it held an action cuts the run short as our error; the call was charged, so it is
recorded first as the step it was (CUT_RESULT), and the run cut short counts it among its steps.

The 150 seconds are the run's clock: the wall time since the first page was opened, less the time its model calls
waited for a free place under our own limit on calls at once to their provider (CANITBUY_PROVIDER_CONCURRENCY),
which is our throttling, not the model's time. The browser, the judge, the model's answers, retries and pauses after
a 429 all count. The wall time may so pass the 150 seconds by at most MAX_OUR_WAIT; past it the run is cut short as
our error. A run records its wall time as its seconds. The limit bounds the whole run, not only each decision: a
checkout the judge reads once the run's clock has passed its seconds (the action or the read ran past them) is a
time limit, not a pass. A model call the time cuts off is the run's last step; when its request was on its way the
provider may charge for it, so the step records our estimate of its prompt (marked estimated, ModelLink).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import msgspec

from domain.agent.actions import Action, Stop, describe
from domain.agent.agent_ports import (
    CUT_RESULT,
    Agent,
    BrowserSession,
    BudgetCutError,
    Decision,
    GatewayRefusalError,
    ModelConnectionError,
    ModelLink,
    Task,
)
from domain.agent.guards import is_verification_page, refusal
from domain.agent.judge import judge_end, judge_probe
from domain.agent.observation import Observation
from domain.agent.ports import BlobStore, RunRecorder, StepRecord
from domain.agent.verdicts import CutShortCause, Outcome, Verdict
from domain.leaderboards.arc_judge import judge_arc_end, judge_arc_probe

MAX_STEPS = 16
DROPPED_ERROR = "no decision before the time limit"
"""Why a step whose model call the run's time cut off has no action (its result: "invalid reply: ...")."""
MAX_SECONDS = 150.0
MAX_OUR_WAIT = 40.0
"""The most a run's wall time may pass its seconds because its model calls waited for a free place under our own
limit on calls at once (CANITBUY_PROVIDER_CONCURRENCY); past it the run is cut short as our error. It keeps a run
inside its job's time-out (its seconds plus 60)."""
_elements_encoder = msgspec.json.Encoder()


class UnsignedAgentError(RuntimeError):
    """A verification page met by a run that could not sign its requests: our configuration, not the model."""


class GateRefusedError(RuntimeError):
    """A verification page on our own store met by a run that signs its requests: our lab's bot gate did not accept
    our signature (its key directory out of the lab's reach, a wrong key, a clock out of the window), our outage,
    never the model's stop. Nothing a model does makes a signed request fail there: the browser signs afresh before
    every action, for the store's own address, and the lab's rate limit answers "too many requests", not a
    verification page."""


class OurThrottleError(RuntimeError):
    """The run's model calls waited longer than MAX_OUR_WAIT for free places under our own limit on calls at once:
    our throttling used the time, so the run is cut short as our error, neither a time limit nor the connection."""


class CutShort(msgspec.Struct, frozen=True):
    """A run that ended by our error or the model's connection: logged, not a result."""

    cause: CutShortCause
    detail: str


@dataclass
class Episode:
    session: BrowserSession
    agent: Agent
    task: Task
    recorder: RunRecorder
    blobs: BlobStore
    clock: Callable[[], float]
    max_steps: int = MAX_STEPS
    max_seconds: float = MAX_SECONDS
    max_our_wait: float = MAX_OUR_WAIT
    signed: bool = True
    """Whether the browser signs the run's requests (Web Bot Auth). Unsigned is our configuration's doing: a run
    that meets a verification page (s13's gate) unsigned is cut short as our error, never the model's stop."""
    stores_ours: bool = True
    """Whether the run's store is ours (the course's lab; False for ARC's real stores): a verification page there
    met by a signed run is our gate refusing our signature, cut short as our error; on a real store it is the
    store's answer, a result."""
    gate_refusal: Callable[[], str | None] | None = None
    """Why our lab's gate refused the page shown (the session's reading of the gate's header), for the detail."""
    history: list[StepRecord] = field(default_factory=list)
    _started: float = 0.0
    _checkout_open: bool = False
    """From the judge's last probe: the guards know the order form is open without another read."""
    _cart_json: str | None = None
    """The newest cart marker a probe read: ARC's task is judged on it when the run ends without a checkout."""

    async def run(self) -> Verdict | CutShort:
        self._started = self.clock()
        try:
            await self.session.open(self.task.start_url)
            return await self._loop()
        except ModelConnectionError as error:
            return await self._cut_short("model_connection", str(error))
        except (GatewayRefusalError, UnsignedAgentError, GateRefusedError, OurThrottleError) as error:
            # Ours, in its own words: our key, credits or route; our signing or our gate; our throttling.
            return await self._cut_short("our_error", str(error))
        except Exception as error:  # noqa: BLE001 - any other failure is ours, and it must be recorded
            return await self._cut_short("our_error", f"{type(error).__name__}: {error}")

    async def _loop(self) -> Verdict:
        observation: Observation | None = None
        for number in range(1, self.max_steps + 1):
            if self._elapsed() >= self.max_seconds:
                return await self._finish(self._end("time_limit", observation, number - 1,
                                                    f"no checkout within {self.max_seconds:g} seconds"))
            self._check_our_wait()
            verdict, observation = await self._step(number)
            if verdict is not None:
                return await self._finish(verdict)
        return await self._finish(self._end("step_limit", observation, self.max_steps,
                                            f"no checkout within {self.max_steps} steps"))

    async def _step(self, number: int) -> tuple[Verdict | None, Observation]:
        began = self.clock()
        observation = await self.session.observe()
        # The blobs are written (fsync) in a thread while the agent decides; the step waits for them below.
        blobs = self._put_blobs(observation)
        if is_verification_page(observation):
            await self._record(number, observation, Decision(action=None), "verification page: stopped", began,
                               blobs)
            if not self.signed:
                raise UnsignedAgentError("a verification page stopped a run that could not sign its requests "
                                         "(no key directory the lab can reach is configured): our error")
            if self.stores_ours:
                raise GateRefusedError(self._gate_detail())
            return self._end("verification_page", observation, number,
                             "a verification page stopped the agent; it does not solve them"), observation
        try:
            decision = await self._decide(observation)
        except BudgetCutError as cut:
            if cut.spent is not None:
                # Our limit cut the reply: the run is cut short (our error), but the provider charged for the
                # call, so it is this step, with its tokens, cost and exchange and no action.
                await self._record(number, observation, cut.spent, CUT_RESULT, began, blobs)
            raise
        result = await self._carry_out(decision, observation)
        stop = decision.action if isinstance(decision.action, Stop) else None
        # The judge reads the page after every step, a stop as much as an action: a model that stops at an order
        # form the probe after its last action read too early (s11 builds its pages a second late) stopped at the
        # checkout, and the page, not its stop, says so. The judge reads the page while the step is stored;
        # neither moves the run on, and the step is stored (or has failed) before the judge's answer is used,
        # whatever the probe did.
        recording = asyncio.ensure_future(self._record(number, observation, decision, result, began, blobs))
        try:
            probe = await self.session.probe()
            read_at = self._elapsed()
        finally:
            await recording
        if read_at >= self.max_seconds and (stop is None or probe.checkout_open):
            # The action or the judge's read ran past the run's time: what the page shows now came too late to
            # count, a checkout as much as anything else (and the cart marker stays the one read in time). A stop
            # the judge reads late without a checkout is still the agent's stop.
            late = f": the order form opened at {read_at:.1f} s, after the limit" if probe.checkout_open else ""
            return self._end("time_limit", observation, number,
                             f"no checkout within {self.max_seconds:g} seconds{late}"), observation
        if read_at < self.max_seconds:
            self._checkout_open = probe.checkout_open
            if probe.cart_json is not None:
                self._cart_json = probe.cart_json
        judged = (judge_arc_probe if self.task.kind == "arc" else judge_probe)(probe, self.task, number)
        if judged is None and stop is not None:
            return self._end("stopped", observation, number, f"the agent stopped: {stop.reason}"), observation
        return judged, observation

    def _gate_detail(self) -> str:
        reason = self.gate_refusal() if self.gate_refusal is not None else None
        why = f" ({reason})" if reason else ""
        return (f"our lab's bot gate refused our signed requests{why}: our signing, key or key directory, not the "
                "model")

    def _put_blobs(self, observation: Observation) -> asyncio.Future[tuple[str | None, str]]:
        def put() -> tuple[str | None, str]:
            shot = self.blobs.put(observation.screenshot) if observation.screenshot else None
            return shot, self.blobs.put(_elements_encoder.encode(observation.elements))

        written = asyncio.ensure_future(asyncio.to_thread(put))
        written.add_done_callback(_retrieve)  # a step abandoned before its record must not log a lost error
        return written

    def _end(self, outcome: Outcome, observation: Observation | None, step: int, reason: str) -> Verdict:
        if self.task.kind == "arc":
            return judge_arc_end(outcome, observation, self.task, step, reason, self._cart_json)
        return judge_end(outcome, observation, self.task, step, reason)

    async def _decide(self, observation: Observation) -> Decision:
        seen = observation.for_agent()  # never the harness's reading of the page text
        deciding = asyncio.ensure_future(self.agent.decide(seen, self.task, self.history))
        # The run's clock stands still while the call waits for a free place under our own limit, so the deadline
        # moves on with each such wait: the call is given what the clock has left (no more than the wall time our
        # throttling may still add), then the clock is read again.
        left = max(self._left(), 0.001)
        try:
            while left > 0:
                await asyncio.wait({deciding}, timeout=left)
                if deciding.done():
                    return deciding.result()
                left = self._left()
        finally:
            if not deciding.done():
                deciding.cancel()
                await asyncio.gather(deciding, return_exceptions=True)
        if not deciding.cancelled():
            return deciding.result()  # answered in the instant the time ran out
        self._check_our_wait()
        trouble = self.agent.connection_trouble() if isinstance(self.agent, ModelLink) else None
        if trouble is not None:
            # The time ran out while the model could not be reached: not the model's failure, not a result.
            raise ModelConnectionError(
                f"the {self.max_seconds:g} seconds ran out while the model call was failing ({trouble})"
            )
        # The model's time ran out mid-call. A request on its way may be charged for (the provider reports nothing
        # to us now): the step records our estimate of its prompt, so the week's spend and its cap count it.
        dropped = self.agent.dropped_call() if isinstance(self.agent, ModelLink) else None
        return msgspec.structs.replace(dropped or Decision(action=None), error=DROPPED_ERROR)

    async def _carry_out(self, decision: Decision, observation: Observation) -> str:
        action: Action | None = decision.action
        if action is None:
            return f"invalid reply: {decision.error or 'no action'}"
        if isinstance(action, Stop):
            return f"stopped: {action.reason}"
        store = urlsplit(self.task.start_url).netloc
        why = refusal(action, observation, store, checkout_open=self._checkout_open)
        if why is not None:
            return f"refused: {why}"
        return await self.session.act(action, observation)

    async def _record(self, number: int, observation: Observation, decision: Decision, result: str,
                      began: float, blobs: asyncio.Future[tuple[str | None, str]]) -> None:
        duration_ms = int((self.clock() - began) * 1000)
        screenshot, elements = await blobs  # durable before the step that names them is stored
        step = StepRecord(
            number=number, url=observation.url, title=observation.title, screenshot=screenshot, elements=elements,
            notes=decision.notes, action=decision.action, result=result,
            duration_ms=duration_ms, model_ms=decision.model_ms,
            tokens_in=decision.tokens_in, tokens_out=decision.tokens_out, cost_usd=decision.cost_usd,
            tokens_reasoning=decision.tokens_reasoning, tokens_cached=decision.tokens_cached,
            exchange=decision.exchange, browser_retries=observation.browser_retries, estimated=decision.estimated,
        )
        self.history.append(step)
        await self.recorder.step_recorded(step)

    async def _finish(self, verdict: Verdict) -> Verdict:
        await self.recorder.finished(verdict, steps=len(self.history), seconds=round(self._wall(), 3))
        return verdict

    async def _cut_short(self, cause: CutShortCause, detail: str) -> CutShort:
        await self.recorder.cut_short(cause, detail, steps=len(self.history), seconds=round(self._wall(), 3))
        return CutShort(cause, detail)

    def _elapsed(self) -> float:
        """The run's clock: the seconds counted in its limit, the wall time less its model calls' waits for a free
        place under our own limit on calls at once (our throttling, not the model's time)."""
        return self._wall() - self._our_wait()

    def _wall(self) -> float:
        """The wall time since the run started: what a finished or cut-short run records as its seconds."""
        return self.clock() - self._started

    def _our_wait(self) -> float:
        return self.agent.our_wait() if isinstance(self.agent, ModelLink) else 0.0

    def _left(self) -> float:
        return min(self.max_seconds - self._elapsed(), self._our_margin())

    def _our_margin(self) -> float:
        """Wall seconds our throttling may still add before the run is cut short as our error."""
        return self.max_seconds + self.max_our_wait - self._wall()

    def _check_our_wait(self) -> None:
        if self._our_margin() <= 0:
            raise OurThrottleError(
                f"the model calls waited {self._our_wait():.1f} s for a free place under our own limit on calls "
                f"at once to the provider (CANITBUY_PROVIDER_CONCURRENCY), more than the {self.max_our_wait:g} s a "
                f"run may wait beyond its {self.max_seconds:g} seconds: our error")


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def summary(step: StepRecord) -> str:
    """One line of history for logs and prompts."""
    action = describe(step.action) if step.action else "-"
    return f"{step.number}. {action} -> {step.result}"
