"""A keyid is a base64url thumbprint, and one in 64 begins with "-": `canitbuy lab serve --own-key-id -3pB...`
must take it as the option's value, not fail as `expected one argument` (seen in CI, 2 December 2026)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from ops.cli import DASHED_VALUES, build_parser, join_dashed_values, main

DASHED = "-3pBv6uVl6qEqVF0InjunOPk2m3HdcEQyFt1KM-dMKo"


def _parsed(*words: str):
    arguments = join_dashed_values(words)
    return build_parser(arguments).parse_args(arguments)


def test_a_keyid_that_begins_with_a_dash_is_the_options_value() -> None:
    args = _parsed("lab", "serve", "--own-key-id", DASHED, "--own-key-id", "plainKeyId", "--port", "8123")
    assert args.own_key_id == [DASHED, "plainKeyId"]
    assert args.port == 8123


def test_the_joined_form_and_other_words_are_left_as_they_are() -> None:
    words = ["lab", "serve", f"--own-key-id={DASHED}", "--no-rate-limit"]
    assert join_dashed_values(words) == words
    assert _parsed(*words).own_key_id == [DASHED]


def test_the_option_without_a_value_is_still_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["lab", "serve", "--own-key-id"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--own-key-id" in err and "see canitbuy lab serve --help" in err


def _options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """Every option of the parser and of its commands, at every level."""
    for action in parser._actions:  # noqa: SLF001 - argparse keeps no public list of its actions
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                yield from _options(sub)
        elif action.option_strings:
            yield action


def test_every_option_that_takes_a_keyid_is_joined_to_its_value() -> None:
    """DASHED_VALUES is kept by hand: an option added later that takes a keyid (or any base64url value) would fail
    one time in 64 until it is listed. Every option whose value is a KEYID must be listed, and every listed one
    must exist."""
    options = list(_options(build_parser()))
    keyids = {s for a in options if a.metavar == "KEYID" or "key-id" in " ".join(a.option_strings)
              for s in a.option_strings if s.startswith("--")}
    assert keyids and keyids <= DASHED_VALUES
    assert {s for a in options for s in a.option_strings} >= DASHED_VALUES
