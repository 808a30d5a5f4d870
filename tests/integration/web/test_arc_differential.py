"""The differential test: every generated submission (tests/integration/web/arc_cases.py, each with the answer
ARC's code gives it) sent to our HTTP endpoint and to our MCP tool, on SQLite and on PostgreSQL. Our answer must be
ARC's: taken (201, or 200 with the first id) or refused (400) with ARC's message, word for word. The one place our
message says more is the test set (we also take our course), listed in docs/arc.md; it still starts with ARC's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from arc_cases import TAKEN, Case, cases
from leaderboard_site import from_network, site_on_backend

SUBMIT = "/api/leaderboard/submit"
DELIBERATE = {
    'test_set must be "ARC-100 v1".': ' (We also take "CanItBuy course 2.1", our own course, which ARC does not.)'
}
"""ARC's message and what ours adds to it, on purpose (docs/arc.md)."""


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    yield from site_on_backend(request, tmp_path_factory)


def network(n: int, offset: int) -> str:
    """A network of its own for each case (198.18.0.0/15), so the day's per-network cap never decides."""
    n += offset
    return f"198.{18 + n // 256}.{n % 256}.7"


def agrees(case: Case, status: int, answer: dict) -> bool:
    if case.arc == TAKEN:
        return status in (200, 201) and bool(answer.get("id"))
    detail = answer.get("error", {}).get("detail", "")
    return status == 400 and detail in (case.arc, case.arc + DELIBERATE.get(case.arc, "\0"))


def disagreements(results: list[tuple[Case, int, dict]]) -> list[str]:
    return [
        f"{case.name}: ARC {case.arc!r}, ours {status} {json.dumps(answer)[:300]}"
        for case, status, answer in results
        if not agrees(case, status, answer)
    ]


def test_the_generator_covers_every_branch_with_a_few_hundred_bodies() -> None:
    generated = cases(datetime.now(UTC))
    assert len(generated) >= 300
    assert len({c.name for c in generated}) == len(generated)
    taken = sum(c.arc == TAKEN for c in generated)
    assert 100 <= taken <= len(generated) - 100  # both answers are well represented
    assert len({c.arc for c in generated}) >= 40  # distinct answers, one or more a branch


def test_over_http_every_answer_is_arcs(client) -> None:
    generated = cases(datetime.now(UTC))
    results = []
    for n, case in enumerate(generated):
        response = from_network(client, network(n, 0)).post(
            SUBMIT, content=case.body, headers={"content-type": "application/json"}
        )
        results.append((case, response.status_code, response.json()))
    wrong = disagreements(results)
    print(f"\nHTTP: {len(generated) - len(wrong)} of {len(generated)} agree with ARC")
    assert not wrong, "\n".join(wrong)


def test_over_mcp_every_answer_is_arcs(client) -> None:
    """Arguments that are not JSON (NaN, Infinity) make the whole request not JSON: a JSON-RPC parse error."""
    generated = [c for c in cases(datetime.now(UTC)) if c.is_object]  # a tool's arguments are an object
    assert any(not c.is_json for c in generated)
    results, unread = [], []
    for n, case in enumerate(generated):
        message = (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
            b'{"name": "submit_leaderboard_run", "arguments": ' + case.body + b"}}"
        )
        response = from_network(client, network(n, 256)).post(
            "/api/ask", content=message, headers={"content-type": "application/json"}
        )
        if not case.is_json:
            if (response.status_code, response.json().get("error", {}).get("code")) != (400, -32700):
                unread.append(f"{case.name}: not JSON, ours {response.status_code} {response.text[:300]}")
            continue
        result = response.json()["result"]
        results.append((case, result["structuredContent"]["http_status"], result["structuredContent"]))
    wrong = disagreements(results) + unread
    print(f"\nMCP: {len(generated) - len(wrong)} of {len(generated)} agree with ARC")
    assert not wrong, "\n".join(wrong)


def test_arcs_pointer_to_the_spec_leads_to_the_format(client) -> None:
    response = client.get("/leaderboard/spec", follow_redirects=False)
    assert (response.status_code, response.headers["location"]) == (302, "/leaderboard#submit")
    assert 'id="submit"' in client.get("/leaderboard").text
