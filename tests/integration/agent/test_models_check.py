"""`canitbuy models check` against a real local server speaking the chat-completions protocol. A model is not
available only when the connection to it failed; a reply without a valid action is flagged, and the model stays
available (the scheduler runs it, and it answers for its replies at the stations)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

from adapters.models.check import check_lineup
from adapters.models.client import HttpxModelClient
from adapters.models.lineup import WEEKLY
from ops.cli import main
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.fixed_gateways import answering_every_call, gateway_named
from tests.integration.agent.openai_server import OpenAIServer, reply

LUNA, HAIKU = WEEKLY[0], WEEKLY[1]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[OpenAIServer, str]]:
    fake = OpenAIServer()
    with ThreadedApp(fake.app) as running:
        yield fake, f"{running.url}/v1"


@pytest.mark.anyio
async def test_each_model_answers_one_real_step_and_the_failing_ones_say_why(
        server: tuple[OpenAIServer, str]) -> None:
    fake, base = server
    broken = msgspec.structs.replace(HAIKU, route=f"{HAIKU.route}-unavailable")
    babbling = msgspec.structs.replace(WEEKLY[2], route=f"{WEEKLY[2].route}-malformed")
    client = HttpxModelClient(base, "sk-test", timeout=5, attempts=2, backoff=0.05)
    try:
        checks = await check_lineup(client, [LUNA, broken, babbling])
    finally:
        await client.aclose()
    ok, down, unusable = checks
    assert ok.available and ok.resolved == "test" and ok.cost_usd > 0 and ok.ms >= 0
    sent = next(r for r in fake.requests if r["model"] == LUNA.route)
    assert sent["max_tokens"] == LUNA.max_tokens and sent["tools"][0]["function"]["name"] == "act"
    assert not down.available and "HTTP 503" in down.problem
    assert unusable.available and not unusable.passed and unusable.problem.startswith("unusable reply")
    assert ok.passed and not down.passed


def test_the_command_prints_each_model_and_exits_0_when_all_answer(
        server: tuple[OpenAIServer, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _, base = server
    monkeypatch.setenv("CANITBUY_MODEL_BASE_URL", base)
    monkeypatch.setenv("AI_GATEWAY_API_KEY", "sk-test")
    assert main(["models", "check", "--timeout", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(WEEKLY) and all("available; resolved test;" in line for line in out)


def test_the_command_exits_1_naming_every_model_the_gateway_cannot_serve(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    monkeypatch.setenv("CANITBUY_MODEL_BASE_URL", f"http://127.0.0.1:{dead}/v1")
    monkeypatch.setenv("AI_GATEWAY_API_KEY", "sk-test")
    assert main(["models", "check", "--model", LUNA.model, "--model", HAIKU.model, "--timeout", "1"]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == (f"canitbuy: 2 of 2 models failed the check: {LUNA.model}, {HAIKU.model} "
                                    "(not available)")
    assert "NOT AVAILABLE" in captured.out


def test_the_command_exits_1_flagging_a_model_that_answers_without_an_action_as_available(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A gateway that answers every call with a 200 in plain text (no tool call): the models are reached."""
    with gateway_named(monkeypatch, answering_every_call(reply({"content": "I would open Aero Run 2."})), "sk-test"):
        assert main(["models", "check", "--model", LUNA.model, "--timeout", "5"]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == (f"canitbuy: 1 of 1 models failed the check: {LUNA.model} (unusable reply: the "
                                    "scheduler still runs it)")
    assert "available, but UNUSABLE REPLY (" in captured.out and "NOT AVAILABLE" not in captured.out


def test_the_command_says_in_one_line_what_is_missing(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AI_GATEWAY_API_KEY", raising=False)
    assert main(["models", "check"]) == 1
    assert capsys.readouterr().err.strip() == "canitbuy: AI_GATEWAY_API_KEY is not set: there is no gateway to ask"
    monkeypatch.setenv("AI_GATEWAY_API_KEY", "sk-test")
    with pytest.raises(SystemExit) as usage:  # a model not in the line-up is a usage error, as in every command
        main(["models", "check", "--model", "gpt-0"])
    assert usage.value.code == 2
    assert capsys.readouterr().err.strip() == ("canitbuy models check: argument --model: 'gpt-0' is not in the "
                                               "line-up (see canitbuy models check --help)")
