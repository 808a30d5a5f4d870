"""Waiting for the site to show what a test wrote to the record: the site follows the log, so a page shows a new
event a moment later."""

from __future__ import annotations

import time
from typing import Any


def eventually(site: Any, path: str, text: str, *, seconds: float = 15) -> str:
    """The page at `path` once it shows `text`; the test fails if it does not within `seconds`."""
    deadline = time.monotonic() + seconds
    while text not in (page := str(site.client.get(path).text)):
        assert time.monotonic() < deadline, f"{path} never showed {text!r}"
        time.sleep(0.2)
    return page
