"""Each line-up entry's token limit and reasoning effort are data, published on /agent and in /api/agent.json."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

from adapters.models import lineup
from adapters.models.agent import request_payload
from adapters.models.lineup import FLAGSHIP, WEEKLY
from adapters.models.release import current_agent
from adapters.settings import Settings
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


def test_the_agent_page_publishes_each_entrants_token_limit_and_reasoning(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        page = client.get("/agent").text
        lineup = {e["model"]: e for e in client.get("/api/agent.json").json()["lineup"]}
    for entrant in WEEKLY:
        row = re.search(rf"{re.escape(entrant.route)}</td>(.*?)</tr>", page, re.S)
        assert row is not None, entrant.route
        assert f'<td class="num">{entrant.max_tokens}</td><td>{entrant.reasoning}</td>' in row.group(1)
        assert lineup[entrant.model]["max_tokens"] == entrant.max_tokens
        assert lineup[entrant.model]["reasoning"] == entrant.reasoning
    words = " ".join(page.split())
    assert (
        "A reply cut by our limit before it holds an action (at the reading station S12, before it holds an "
        "answer) is our error"
    ) in words


def test_each_request_asks_for_the_entrants_own_limit_and_reasoning() -> None:
    thinking = next(e for e in WEEKLY if e.reasoning != "none")
    plain = next(e for e in WEEKLY if e.reasoning == "none")
    assert thinking.max_tokens > 400  # reasoning models get room to think before they answer
    assert request_payload(thinking, [])["max_tokens"] == thinking.max_tokens
    assert request_payload(thinking, [])["reasoning"] == {"effort": thinking.reasoning}
    assert "reasoning" not in request_payload(plain, [])


def test_the_agent_page_gives_the_token_limits_requests_send_and_not_the_releases_recorded_figure(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        page = client.get("/agent").text
        spec = client.get("/api/agent.json").json()["current"]["spec"]
    sent = sorted({request_payload(e, [])["max_tokens"] for e in (*WEEKLY, *FLAGSHIP)})
    limit = re.search(r"<dt>Reply tokens at most</dt><dd>(.*?)</dd>", page, re.S)
    assert limit is not None
    words = " ".join(limit.group(1).split())
    assert words.startswith(f"Each model’s own, sent with each of its requests: {sent[0]} to {sent[-1]} completion")
    # The release's content (so its sha256) is kept as recorded; the page says that its figure is not sent.
    assert spec["limits"]["max_tokens"] == current_agent().limits.max_tokens
    assert f"record holds {spec['limits']['max_tokens']} here" in words and "the requests do not send" in words
    assert spec["limits"]["max_tokens"] not in sent


def test_the_agent_page_calls_the_line_ups_prices_our_assumption_as_the_line_up_does(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "var", site_secret="test secret " * 4)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        page = " ".join(client.get("/agent").text.split())
    assert "not quoted from the gateway" in " ".join((lineup.__doc__ or "").split())
    assert "are our assumption, not quoted from the gateway" in page
    assert "Prices are the gateway’s" not in page
