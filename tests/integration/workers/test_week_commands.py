"""`canitbuy week run | schedule | publish` read an injected clock: a week that is over takes no runs (exit 2, one
line), and a week in progress is published provisionally."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapters.settings import Settings
from ops.cli import main

WEDNESDAY = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)  # 2026-W49


@pytest.fixture
def env(sqlite_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("CANITBUY_DATA_DIR", str(sqlite_settings.data_dir))
    for name in ("CANITBUY_DATABASE_URL", "CANITBUY_REDIS_URL", "CANITBUY_LAB_URL"):
        monkeypatch.delenv(name, raising=False)
    return sqlite_settings


@pytest.mark.parametrize("week", ["2026-W48", "2026-W01"])
def test_week_run_for_a_week_that_is_over_exits_2_with_one_line(env: Settings, week: str, capsys) -> None:
    assert main(["week", "run", "--week", week, "--models", "baseline-robust"], clock=lambda: WEDNESDAY) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"canitbuy: {week} is over") and "2026-W49" in err


def test_week_run_for_a_week_not_begun_exits_2(env: Settings, capsys) -> None:
    assert main(["week", "run", "--week", "2026-W50"], clock=lambda: WEDNESDAY) == 2
    assert "has not begun" in capsys.readouterr().err


def test_week_schedule_cannot_pretend_an_earlier_time_of_the_week(env: Settings, capsys) -> None:
    """On a Wednesday, a --now of that Monday afternoon made the repeats the schedule makes only then."""
    assert main(["week", "schedule", "--now", "2026-11-30T15:00Z", "--no-execute"], clock=lambda: WEDNESDAY) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("canitbuy: --now 2026-11-30T15:00:00+00:00: that is earlier")


def test_week_schedule_cannot_pretend_a_past_monday(env: Settings, capsys) -> None:
    assert main(["week", "schedule", "--now", "2026-11-23T07:00", "--no-execute"], clock=lambda: WEDNESDAY) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "2026-W48 is over" in err
