"""ARC-shaped test sets from files, and where each row's agent starts.

A test set is a CSV with at least the columns id, host and product_url (ARC's arc-100.csv, our
domain/testsets/canitbuy-course-2.1.csv), or ARC's arc-100.json (`{"name", "version", "stores": [...]}`). A bare
file name that is not a path is looked up in domain/testsets/. Which test set it is follows from its ids, and
every id must be one of that test set's (an export of unknown ids would be refused anyway).

Our course's rows name the public lab (`sNN.lab.canitbuy.com`); they are pointed at the lab this command runs
against (the same station, path and query on its scheme, domain and port), so the course runs offline.
"""

from __future__ import annotations

import csv
import io
import json
import re
import socket
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from domain.leaderboards.arc import ARC_TEST_SET, COURSE_TEST_SET, TestItem, TestSet, test_set_named

PUBLIC_LAB_DOMAIN = "lab.canitbuy.com"
_STATION = re.compile(r"^s(0[1-9]|1[0-8])$")
_ARC_ID = re.compile(r"^arc100-v1-[0-9]{3}$")


class TestSetError(ValueError):
    """The file is not an ARC-shaped test set; the message says what is wrong."""


def locate(name: str) -> Path:
    path = Path(name)
    if path.is_file():
        return path
    bundled = Path(str(resources.files("domain") / "testsets" / path.name))
    if bundled.is_file():
        return bundled
    raise TestSetError(f"no test set file {name!r} (nor domain/testsets/{path.name})")


def read_test_set(name: str) -> TestSet:
    path = locate(name)
    text = path.read_text(encoding="utf-8")
    items = _json_items(text) if path.suffix.lower() == ".json" else _csv_items(text)
    if not items:
        raise TestSetError(f"{path}: no rows")
    ids = [item.id for item in items]
    if all(_STATION.match(i) for i in ids):
        set_name = COURSE_TEST_SET
    elif all(_ARC_ID.match(i) for i in ids):
        set_name = ARC_TEST_SET
    else:
        raise TestSetError(f"{path}: ids must all be ARC-100 v1 ids (arc100-v1-001..) or course ids (s01..s18)")
    known = test_set_named(set_name).by_id()
    for item in items:
        if item.id not in known:
            raise TestSetError(f"{path}: {item.id} is not in {set_name}")
    if len(set(ids)) != len(ids):
        raise TestSetError(f"{path}: an id appears twice")
    return TestSet(set_name, items)


def _row(row: dict[str, object], where: str) -> TestItem:
    values = {key: str(row.get(key) or "").strip() for key in ("id", "host", "product_url", "name")}
    for key in ("id", "host", "product_url"):
        if not values[key]:
            raise TestSetError(f"{where}: {key} is missing")
    if urlsplit(values["product_url"]).scheme not in ("http", "https"):
        raise TestSetError(f"{where}: product_url must be an http(s) address")
    return TestItem(values["id"], values["host"], values["product_url"], values["name"])


def _csv_items(text: str) -> list[TestItem]:
    reader = csv.DictReader(io.StringIO(text))
    missing = {"id", "host", "product_url"} - set(reader.fieldnames or [])
    if missing:
        raise TestSetError(f"the CSV lacks the column(s) {', '.join(sorted(missing))}")
    return [_row(row, f"row {n}") for n, row in enumerate(reader, start=2)]


def _json_items(text: str) -> list[TestItem]:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise TestSetError(f"not JSON: {error}") from None
    stores = data.get("stores") if isinstance(data, dict) else None
    if not isinstance(stores, list):
        raise TestSetError('the JSON needs a "stores" array (ARC\'s arc-100.json shape)')
    return [_row(s if isinstance(s, dict) else {}, f"stores[{n}]") for n, s in enumerate(stores)]


def pick(test_set: TestSet, ids: str | None) -> list[TestItem]:
    if not ids:
        return list(test_set.items)
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    by_id = test_set.by_id()
    unknown = [i for i in wanted if i not in by_id]
    if unknown:
        raise TestSetError(f"not in the test set: {', '.join(unknown)}")
    return [by_id[i] for i in dict.fromkeys(wanted)]


def start_url(item: TestItem, lab_url: str, lab_domain: str) -> str:
    """The product address, or its copy on the running lab when it names a lab station."""
    parts = urlsplit(item.product_url)
    host = (parts.hostname or "").lower()
    station, _, parent = host.partition(".")
    if not (_STATION.match(station) and parent in (PUBLIC_LAB_DOMAIN, lab_domain)):
        return item.product_url
    lab = urlsplit(lab_url)
    port = f":{lab.port}" if lab.port else ""
    return urlunsplit((lab.scheme, f"{station}.{lab_domain}{port}", parts.path or "/", parts.query, ""))


def is_lab(url: str, lab_domain: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host.endswith("." + lab_domain)


def unreachable(url: str, timeout: float = 5.0) -> str | None:
    """Why the store cannot be reached from this machine (name or TCP connection), or None when it can."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as error:
        return f"store unreachable from this machine ({host}:{port}: {error.strerror or error})"
