"""Reading an arc-leaderboard-submission/v1 object as ARC's validator does: the first problem found, in ARC's words.

The reference is ARC's `validateSubmission` and `assertNotExample` (abab7575/arc-open, `benchmark/src/
submission.ts`); each check below cites the rule it follows, in ARC's order, with ARC's message. Where we differ on
purpose (our own course as a second test set, the body read as bytes) the comment says so and docs/arc.md lists it.

What comes out is what we store: text cleaned to plain text, the store's own id and host, times as
`toISOString()` writes them, URLs as `new URL().toString()` writes them, steps and seconds rounded or dropped.
Unknown fields are dropped at every level (ARC: "Unknown fields are ignored"), our `receipt` extension included
wherever it is not a well-formed receipt of a course run.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from domain.leaderboards.arc import (
    ARC_TEST_SET,
    COURSE_TEST_SET,
    MAX_BYTES,
    MIN_COUNTED,
    NOT_COUNTED,
    OUTCOMES,
    PATHS,
    SPEC,
    ArcAgent,
    ArcResult,
    ArcRun,
    Submission,
    SubmissionProblem,
    TestItem,
    TestSet,
    test_set_named,
)
from domain.leaderboards.arc_reading import (
    NotAnHttpsUrl,
    host_key,
    https_url,
    iso_of_ms,
    js_length,
    js_round,
    js_trim,
    ms_of,
    parse_time_ms,
    plain_text,
    storable,
)

MAX_RUN_AGE_DAYS = 90
"""submission.ts MAX_RUN_AGE_DAYS: a time older than this is refused."""
FUTURE_SLACK_MS = 10 * 60_000
"""submission.ts `when()`: a time more than 10 minutes ahead of the server's clock is refused."""
EXAMPLE_AGENT = ("Example Shopper", "Example Labs")
"""submission.ts EXAMPLE_AGENT_NAME and assertNotExample: the example's agent name and builder."""
_RECEIPT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$")


class BodyTooLarge(SubmissionProblem):
    """The body is over 200 KB: answered 413, as ARC's API description (docs/openapi.json) says."""


def parse_submission(body: bytes, now: datetime | None = None) -> Submission:
    """Read a request body. Like `Request.json()` in ARC's server, the bytes are read as UTF-8 with invalid
    sequences replaced and a leading byte order mark dropped; JSON's numbers are doubles (1e400 is Infinity)."""
    if len(body) > MAX_BYTES:
        raise BodyTooLarge(f"The submission is larger than 200 KB ({MAX_BYTES} bytes).")
    return check_submission(read_json(body), now)


class NotJson(SubmissionProblem):
    """The bytes are not JSON as `JSON.parse` reads it (NaN and Infinity are not JSON)."""


def read_json(body: bytes) -> Any:
    """The bytes as ARC's server reads a request body: UTF-8 with invalid sequences replaced, a leading byte order
    mark dropped, `NaN`/`Infinity` refused as `JSON.parse` refuses them, integers past 2**53 read as doubles. The
    MCP endpoint reads its whole request with this too, so a tool's arguments are the values a body would be."""
    text = body.decode("utf-8", "replace").removeprefix("\ufeff")
    try:
        return json.loads(text, parse_constant=_no_constant, parse_int=_js_number)
    except (ValueError, RecursionError):
        raise NotJson("Send a JSON object. See /leaderboard/spec.") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _js_number(text: str) -> int | float:
    """An integer too large for a double is a double in JavaScript, and so here: read as a double from its text,
    so one past a double's range (309 digits or more) is Infinity, as `JSON.parse` reads it, never an error."""
    if len(text) > 17:  # past 2**53 whatever its sign
        return float(text)
    number = int(text)
    return number if abs(number) <= 2**53 else float(number)


def check_submission(data: Any, now: datetime | None = None) -> Submission:
    """ARC's validateSubmission then assertNotExample (submission.ts), on decoded JSON."""
    now_ms = ms_of(now or datetime.now(UTC))
    if not isinstance(data, dict):
        raise SubmissionProblem("Send a JSON object. See /leaderboard/spec.")
    if data.get("spec") != SPEC:
        raise SubmissionProblem(f'spec must be "{SPEC}".')
    test_set = _test_set(data.get("test_set"))
    agent = _agent(_fields(data.get("agent")))
    run = _run(_fields(data.get("run")), now_ms, test_set.name)
    results = _results(data.get("results"), test_set, now_ms)
    counted = [r for r in results if r.outcome not in NOT_COUNTED]
    if len(counted) < MIN_COUNTED:
        raise SubmissionProblem(f"Send at least {MIN_COUNTED} results that are not error or not_attempted.")
    contact = _text(data.get("contact"), 200, "contact")
    submission = Submission(SPEC, test_set.name, agent, run, results, contact)
    if (agent.name, agent.builder) == EXAMPLE_AGENT:  # assertNotExample, on the cleaned name and builder
        raise SubmissionProblem("This is the example run. It is valid, but replace agent and results with your "
                                f"own run against {test_set.name} before submitting.")
    return submission


def _fields(value: Any) -> dict[str, Any]:
    """ARC reads a missing or non-object `agent`, `run` or result as an empty object."""
    return value if isinstance(value, dict) else {}


def _test_set(value: Any) -> TestSet:
    # Deliberately wider than ARC, which takes "ARC-100 v1" only: we also take our own course (docs/arc.md).
    if value in (ARC_TEST_SET, COURSE_TEST_SET):
        return test_set_named(value)
    raise SubmissionProblem(f'test_set must be "{ARC_TEST_SET}". (We also take "{COURSE_TEST_SET}", our own '
                            "course, which ARC does not.)")


def _text(value: Any, limit: int, field: str, required: bool = False) -> str | None:
    """submission.ts `text()`: null and "" are absent; a string is cleaned to plain text, then its length (UTF-16
    units) is checked; a required field empty after cleaning is missing."""
    if value is None or value == "":
        if required:
            raise SubmissionProblem(f"{field} is required.")
        return None
    if not isinstance(value, str):
        raise SubmissionProblem(f"{field} must be a string.")
    text = plain_text(value)
    if required and not text:
        raise SubmissionProblem(f"{field} is required.")
    if js_length(text) > limit:
        raise SubmissionProblem(f"{field} must be at most {limit} characters.")
    return storable(text) or None


def _url(value: Any, field: str) -> str | None:
    """submission.ts `httpsUrl()`: plain text of at most 500 characters, then https with no user or password."""
    text = _text(value, 500, field)
    if not text:
        return None
    try:
        return https_url(text)
    except NotAnHttpsUrl:
        raise SubmissionProblem(f"{field} must be an https URL.") from None


def _when(value: Any, field: str, now_ms: int, test_set: str) -> str | None:
    """submission.ts `when()`: null and "" are absent; otherwise Date.parse, at most 10 minutes ahead, at most
    90 days old."""
    if value is None or value == "":
        return None
    moment = parse_time_ms(value) if isinstance(value, str) else None
    if moment is None:
        raise SubmissionProblem(f"{field} must be an ISO 8601 timestamp.")
    if moment > now_ms + FUTURE_SLACK_MS:
        raise SubmissionProblem(f"{field} is in the future.")
    if moment < now_ms - MAX_RUN_AGE_DAYS * 86_400_000:
        raise SubmissionProblem(f"{field} is older than {MAX_RUN_AGE_DAYS} days. Re-run against {test_set}.")
    return iso_of_ms(moment)


def _agent(a: dict[str, Any]) -> ArcAgent:
    # ARC checks the path first, trimmed and lowercased, then the text fields in this order.
    path = js_trim(a["path"]).lower() if isinstance(a.get("path"), str) else ""
    if path not in PATHS:
        raise SubmissionProblem(f"agent.path must be one of {', '.join(PATHS)}.")
    name = _text(a.get("name"), 60, "agent.name", required=True) or ""
    version = _text(a.get("version"), 40, "agent.version")
    builder = _text(a.get("builder"), 80, "agent.builder")
    url = _url(a.get("url"), "agent.url")
    model = _text(a.get("model"), 80, "agent.model")
    return ArcAgent(name=name, path=path, version=version, builder=builder, url=url, model=model)


def _run(r: dict[str, Any], now_ms: int, test_set: str) -> ArcRun:
    if r.get("stopped_before_payment") is not True:
        runs = "ARC-100 runs" if test_set == ARC_TEST_SET else "Course runs"
        raise SubmissionProblem(f"run.stopped_before_payment must be true. {runs} must stop before payment; "
                                "never place real orders.")
    return ArcRun(
        stopped_before_payment=True,
        started_at=_when(r.get("started_at"), "run.started_at", now_ms, test_set),
        finished_at=_when(r.get("finished_at"), "run.finished_at", now_ms, test_set),
        notes=_text(r.get("notes"), 500, "run.notes"),
    )


def _results(value: Any, test_set: TestSet, now_ms: int) -> list[ArcResult]:
    if not isinstance(value, list):
        raise SubmissionProblem("results must be an array.")
    course = test_set.name == COURSE_TEST_SET
    if len(value) > len(test_set.items):
        raise SubmissionProblem(f"At most {len(test_set.items)} results (one per "
                                f"{'course station' if course else 'ARC-100 store'}).")
    by_id = test_set.by_id()
    by_host = {host_key(item.host): item for item in test_set.items}
    seen: set[str] = set()
    results = []
    for index, raw in enumerate(value):
        x = _fields(raw)
        store = _store(x, by_id, by_host)
        if store is None:
            raise SubmissionProblem(
                f"results[{index}]: id must be a {COURSE_TEST_SET} station id (s01 ... s18) or host." if course else
                f"results[{index}]: id must be an ARC-100 v1 store id (arc100-v1-001 ... arc100-v1-100) or host.")
        if store.id in seen:
            raise SubmissionProblem(f"results[{index}]: {store.id} appears twice.")
        seen.add(store.id)
        outcome = js_trim(x["outcome"]).lower() if isinstance(x.get("outcome"), str) else ""
        if outcome not in OUTCOMES:
            raise SubmissionProblem(f"results[{index}].outcome must be one of {', '.join(OUTCOMES)}.")
        results.append(ArcResult(
            id=store.id, host=store.host, outcome=outcome,
            at=_when(x.get("at"), f"results[{index}].at", now_ms, test_set.name),
            evidence_url=_url(x.get("evidence_url"), f"results[{index}].evidence_url"),
            steps=_number(x.get("steps"), 10_000), seconds=_number(x.get("seconds"), 86_400),
            receipt=_receipt(x.get("receipt")) if course else None,
        ))
    return results


def _store(x: dict[str, Any], by_id: dict[str, TestItem], by_host: dict[str, TestItem]) -> TestItem | None:
    """An id, when it is a string, wins over a host: a wrong id is refused whatever the host says."""
    if isinstance(x.get("id"), str):
        return by_id.get(js_trim(x["id"]))
    if isinstance(x.get("host"), str):
        return by_host.get(host_key(js_trim(x["host"])))
    return None


def _number(value: Any, limit: int) -> int | None:
    """submission.ts `num()`: a finite number from 0 to the limit, rounded; anything else is dropped, not refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or not 0 <= value <= limit:  # NaN, Infinity (1e400), out of range
        return None
    return js_round(value)


def _receipt(value: Any) -> str | None:
    """Our extension for course runs (a compact JWS): kept when well-formed, otherwise ignored like any unknown
    field, so it never turns a run ARC would take into a refusal."""
    if isinstance(value, str) and len(value) <= 4000 and _RECEIPT.match(value):
        return value
    return None
