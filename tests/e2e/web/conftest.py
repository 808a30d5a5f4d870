"""The site served by uvicorn in a thread on a free port, over a record with two weeks of real runs, and one
Chromium for the whole session (Debian's build, as the project runs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration" / "web"))

from served import served  # noqa: E402
from site_data import COURSE, SiteWeek, make_week, run_one  # noqa: E402

from adapters.settings import Settings  # noqa: E402
from adapters.sqldb import SqlDb  # noqa: E402
from adapters.staff_accounts import StaffAccounts  # noqa: E402
from adapters.wiring import Runtime, build_runtime  # noqa: E402
from domain.week.weeks import previous_week  # noqa: E402
from web.app import create_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = "/usr/lib/chromium/chromium"
STAFF = ("editor@canitbuy.com", "a long staff password")


@dataclass
class LiveSite:
    url: str
    week: SiteWeek
    earlier_week: str
    runtime: Runtime
    """The same record the site reads, for tests that make events while a page is open."""


@pytest.fixture(scope="session")
def live_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("site") / "var")
    runtime = build_runtime(settings)
    week = make_week(runtime)
    earlier = previous_week(week.week)
    for station in COURSE.codes:
        run_one(runtime, "model-alpha", station, earlier)
    accounts = StaffAccounts(SqlDb(settings))
    accounts.db.migrate()
    accounts.add(*STAFF)
    with served(create_app(settings)) as url:
        yield LiveSite(url, week, earlier, runtime)
        runtime.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--disable-quic"], headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core from the path `bash ops/dev test` exports, else installed the same way (npm, into var/node)."""
    path = os.environ.get("CANITBUY_AXE_JS")
    if not path or not Path(path).exists():
        folder = ROOT / "var" / "node"
        path = str(folder / "node_modules" / "axe-core" / "axe.min.js")
        if not Path(path).exists():
            folder.mkdir(parents=True, exist_ok=True)
            subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "axe-core@4"], cwd=folder,
                           check=True, timeout=300)
    return Path(path).read_text()
