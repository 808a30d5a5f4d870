"""Fixtures of the schedule tests: a clock the test moves (Monday 07:00 UTC of 2026-W49 unless a test module's own
`clock` fixture says otherwise) and the runtime built on it, on each backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from tests.integration.workers.clocked import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def runtime(settings: Settings, clock: Clock) -> Iterator[Runtime]:
    with build_runtime(settings, clock) as rt:
        yield rt
