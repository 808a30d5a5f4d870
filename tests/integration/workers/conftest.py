"""Fixtures of the schedule tests: a clock the test moves (Monday 07:00 UTC of 2026-W49 unless a test module's own
`clock` fixture says otherwise), the runtime built on it, on each backend, and a gateway that refuses our key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.settings import Settings
from adapters.wiring import Runtime, build_runtime
from tests.integration.agent.conftest import ThreadedApp
from tests.integration.agent.fixed_gateways import INVALID_KEY, answering_every_call
from tests.integration.workers.clocked import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def runtime(settings: Settings, clock: Clock) -> Iterator[Runtime]:
    with build_runtime(settings, clock) as rt:
        yield rt


@pytest.fixture
def refusing() -> Iterator[str]:
    """The address of a gateway that answers every call 401 (an invalid key): our configuration's refusal."""
    with ThreadedApp(answering_every_call(INVALID_KEY, status=401)) as gate:
        yield f"{gate.url}/v1"
