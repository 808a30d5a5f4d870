"""The site over a real record with a published week, on SQLite and on a fresh PostgreSQL database, one per test
module (building a week of runs takes a second or two). Requests go through Starlette's TestClient over https,
so the Secure staff cookie is kept."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from desk_client import AUDITOR, STAFF  # noqa: E402
from site_data import SiteWeek, make_week, site_settings  # noqa: E402

from adapters.settings import Settings  # noqa: E402
from adapters.sqldb import SqlDb  # noqa: E402
from adapters.staff_accounts import StaffAccounts  # noqa: E402
from adapters.wiring import build_runtime  # noqa: E402
from web.app import create_app  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


@dataclass
class SiteUnderTest:
    settings: Settings
    week: SiteWeek
    client: TestClient


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteUnderTest]:
    with site_settings(request.param, tmp_path_factory.mktemp("site") / "var", "canitbuy_web") as settings:
        with build_runtime(settings) as runtime:
            week = make_week(runtime)
        accounts = StaffAccounts(SqlDb(settings))
        accounts.db.migrate()
        accounts.add(*STAFF, role="staff")
        accounts.add(*AUDITOR, role="auditor")
        with TestClient(create_app(settings), base_url="https://testserver") as client:
            yield SiteUnderTest(settings, week, client)
