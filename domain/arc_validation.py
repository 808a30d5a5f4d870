"""Reading an arc-leaderboard-submission/v1 object: the first problem found, named by its field.

The checks follow ARC's JSON Schema in order (required fields, constants, lengths, enums, formats), then the
rules the schema cannot say: ids known to the test set and not repeated, at least 10 results counted, and the
spec's own example refused. Unknown fields are ignored, as ARC's format says.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import msgspec

from domain.arc import (
    MAX_BYTES,
    MIN_COUNTED,
    NOT_COUNTED,
    OUTCOMES,
    PATHS,
    SPEC,
    Submission,
    SubmissionProblem,
    test_set_named,
)

_ID = {"ARC-100 v1": re.compile(r"^arc100-v1-[0-9]{3}$"), "CanItBuy course": re.compile(r"^s(0[1-9]|1[0-8])$")}
_EXAMPLE_NAMES = {"example shopper"}


def parse_submission(body: bytes) -> Submission:
    if len(body) > MAX_BYTES:
        raise SubmissionProblem(f"the submission is {len(body)} bytes; at most {MAX_BYTES} (200 KB)")
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError as error:
        raise SubmissionProblem(f"not JSON: {error}") from None
    return check_submission(data)


def check_submission(data: Any) -> Submission:
    if not isinstance(data, dict):
        raise SubmissionProblem("the submission must be one JSON object")
    for key in ("spec", "test_set", "agent", "run", "results"):
        if key not in data:
            raise SubmissionProblem(f"{key}: required")
    if data["spec"] != SPEC:
        raise SubmissionProblem(f"spec: must be {SPEC!r}")
    test_set = test_set_named(data["test_set"]) if isinstance(data["test_set"], str) else test_set_named("")
    _check_agent(data["agent"])
    _check_run(data["run"])
    _check_results(data["results"], test_set.name)
    if "contact" in data:
        _text(data["contact"], "contact", 200)
    submission = msgspec.convert(data, Submission, strict=False)
    _check_rules(submission)
    return submission


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SubmissionProblem(f"{where}: must be an object")
    return value


def _text(value: Any, where: str, max_length: int, min_length: int = 0) -> str:
    if not isinstance(value, str):
        raise SubmissionProblem(f"{where}: must be a string")
    if not min_length <= len(value) <= max_length:
        raise SubmissionProblem(f"{where}: must be {min_length} to {max_length} characters")
    return value


def _https(value: Any, where: str) -> None:
    text = _text(value, where, 2000)
    if not re.match(r"^https://[^\s/?#]+[^\s]*$", text):
        raise SubmissionProblem(f"{where}: must be an https:// address")


def _moment(value: Any, where: str) -> None:
    text = _text(value, where, 40)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise SubmissionProblem(f"{where}: must be a date-time such as 2026-10-09T11:10:00Z") from None
    if moment.tzinfo is None:
        raise SubmissionProblem(f"{where}: must carry a time zone (Z or +00:00)")


def _check_agent(value: Any) -> None:
    agent = _object(value, "agent")
    for key in ("name", "path"):
        if key not in agent:
            raise SubmissionProblem(f"agent.{key}: required")
    _text(agent["name"], "agent.name", 60, 1)
    for key, limit in (("version", 40), ("builder", 80), ("model", 80)):
        if key in agent:
            _text(agent[key], f"agent.{key}", limit)
    if "url" in agent:
        _https(agent["url"], "agent.url")
    if agent["path"] not in PATHS:
        raise SubmissionProblem(f"agent.path: must be one of {', '.join(PATHS)}")


def _check_run(value: Any) -> None:
    run = _object(value, "run")
    if "stopped_before_payment" not in run:
        raise SubmissionProblem("run.stopped_before_payment: required")
    if run["stopped_before_payment"] is not True:
        raise SubmissionProblem("run.stopped_before_payment: must be true (never pay, never place an order)")
    for key in ("started_at", "finished_at"):
        if key in run:
            _moment(run[key], f"run.{key}")
    if "notes" in run:
        _text(run["notes"], "run.notes", 500)


def _check_results(value: Any, test_set: str) -> None:
    if not isinstance(value, list):
        raise SubmissionProblem("results: must be an array")
    if not 10 <= len(value) <= 100:
        raise SubmissionProblem(f"results: must hold 10 to 100 results, not {len(value)}")
    pattern = _ID["ARC-100 v1"] if test_set == "ARC-100 v1" else _ID["CanItBuy course"]
    for index, item in enumerate(value):
        where = f"results[{index}]"
        result = _object(item, where)
        if "outcome" not in result:
            raise SubmissionProblem(f"{where}.outcome: required")
        if "id" not in result and "host" not in result:
            raise SubmissionProblem(f"{where}: needs an id or a host")
        if "id" in result and not (isinstance(result["id"], str) and pattern.match(result["id"])):
            raise SubmissionProblem(f"{where}.id: must match {pattern.pattern}")
        if "host" in result:
            _text(result["host"], f"{where}.host", 253)
        if result["outcome"] not in OUTCOMES:
            raise SubmissionProblem(f"{where}.outcome: must be one of {', '.join(OUTCOMES)}")
        if "at" in result:
            _moment(result["at"], f"{where}.at")
        if "evidence_url" in result:
            _https(result["evidence_url"], f"{where}.evidence_url")
        for key in ("steps", "seconds"):
            number = result.get(key, 0)
            if isinstance(number, bool) or not isinstance(number, int | float) or number < 0:
                raise SubmissionProblem(f"{where}.{key}: must be a number of at least 0")
        if "receipt" in result:
            _text(result["receipt"], f"{where}.receipt", 4000)


def _check_rules(submission: Submission) -> None:
    items = test_set_named(submission.test_set)
    by_id, by_host = items.by_id(), items.by_host()
    seen: set[str] = set()
    for index, result in enumerate(submission.results):
        item = by_id.get(result.id) if result.id else by_host.get(result.host or "")
        if item is None:
            named = result.id or result.host
            raise SubmissionProblem(f"results[{index}]: {named!r} is not in {submission.test_set}")
        if result.id and result.host and by_id[result.id].host != result.host:
            raise SubmissionProblem(f"results[{index}]: id {result.id} is {by_id[result.id].host}, not {result.host}")
        if item.id in seen:
            raise SubmissionProblem(f"results[{index}]: {item.id} is reported twice")
        seen.add(item.id)
    counted = [r for r in submission.results if r.outcome not in NOT_COUNTED]
    if len(counted) < MIN_COUNTED:
        raise SubmissionProblem(
            f"results: only {len(counted)} count toward n (error and not_attempted do not); at least {MIN_COUNTED}"
        )
    evidence_hosts = {(r.evidence_url or "").split("/")[2] for r in submission.results if r.evidence_url}
    if submission.agent.name.strip().lower() in _EXAMPLE_NAMES or evidence_hosts & {"example.com"}:
        raise SubmissionProblem("this is the spec's example run, not a run of a real agent")
