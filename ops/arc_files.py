"""ARC-shaped test sets from files, and where each row's agent starts.

A test set is a CSV with at least the columns id, host and product_url (ARC's arc-100.csv, our
domain/testsets/canitbuy-course-2.1.csv), or ARC's arc-100.json (`{"name", "version", "stores": [...]}`), read as
UTF-8 with or without a byte order mark. A bare file name (no directory part) not found is looked up in
domain/testsets/. Which test set it is follows from its ids, and every id must be one of that test set's (an
export of unknown ids would be refused anyway). An ARC-100 row must also name the frozen set's host and
product_url for its id: the id names a store, and a file cannot lend it to another; a course row's host and
product_url must be on the station its id names. Every error names the file,
and the row when it is about one.

Our course's rows name the public lab (`sNN.lab.canitbuy.com`); they are pointed at the lab this command runs
against (the same station, path and query on its scheme, domain and port), so the course runs offline.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import socket
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx

from adapters.fetcher import USER_AGENT
from adapters.settings import SettingsError, check_http_url
from domain.leaderboards.arc import ARC_TEST_SET, COURSE_TEST_SET, TestItem, TestSet, test_set_named
from domain.leaderboards.arc_reading import host_key

PUBLIC_LAB_DOMAIN = "lab.canitbuy.com"
_STATION = re.compile(r"^s(0[1-9]|1[0-8])$")
_ARC_ID = re.compile(r"^arc100-v1-[0-9]{3}$")


class TestSetError(ValueError):
    """The file is not an ARC-shaped test set; the message says what is wrong."""


ALIASES = {"arc-100.csv": "arc-100-v1.csv", "arc-100.json": "arc-100-v1.json"}
"""ARC's own file names (its repository's benchmark/arc-100/v1/) for our bundled copies of them."""


def locate(name: str) -> Path:
    """The file `name` names; a bare file name (no directory part) not found here is looked up in
    domain/testsets/, ARC's own names (`arc-100.csv`, `arc-100.json`) as our copies of those files. A path with a
    directory part is taken as given: a mistyped folder is an error, never silently the bundled file of the same
    name."""
    path = Path(name)
    if path.is_file():
        return path
    if path.name != name:
        raise TestSetError(f"no test set file {name!r}")
    bundled_name = ALIASES.get(name, name)
    bundled = Path(str(resources.files("domain") / "testsets" / bundled_name))
    if bundled.is_file():
        return bundled
    raise TestSetError(f"no test set file {name!r} (nor domain/testsets/{bundled_name})")


def read_test_set(name: str) -> TestSet:
    path = locate(name)
    try:  # utf-8-sig: Excel starts the CSVs it saves with a byte order mark
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise TestSetError(f"{path}: cannot be read as UTF-8 text ({error})") from None
    rows = _json_items(path, text) if path.suffix.lower() == ".json" else _csv_items(path, text)
    if not rows:
        raise TestSetError(f"{path}: no rows")
    ids = [item.id for _, item in rows]
    if all(_STATION.match(i) for i in ids):
        set_name = COURSE_TEST_SET
    elif all(_ARC_ID.match(i) for i in ids):
        set_name = ARC_TEST_SET
    else:
        raise TestSetError(f"{path}: ids must all be ARC-100 v1 ids (arc100-v1-001..) or course ids (s01..s18)")
    known = test_set_named(set_name).by_id()
    seen: set[str] = set()
    for where, item in rows:
        if item.id not in known:
            raise TestSetError(f"{path}: {where}: {item.id} is not in {set_name}")
        if item.id in seen:
            raise TestSetError(f"{path}: {where}: {item.id} appears twice")
        seen.add(item.id)
        problem = differs_from_frozen(item, known[item.id]) if set_name == ARC_TEST_SET else other_station(item)
        if problem:
            raise TestSetError(f"{path}: {where}: {problem}")
    return TestSet(set_name, [item for _, item in rows])


def differs_from_frozen(item: TestItem, frozen: TestItem) -> str | None:
    """Why an ARC-100 row is not the frozen set's row of its id (its store host or its product address), or None.

    An ARC-100 id names one store and one product: a row giving the id another host or product_url would run
    another store under ARC-100's name. Hosts are compared as ARC's `arc100ByHost` (benchmark/src/arc100.ts)
    compares them (`host_key`: lowercased, one trailing dot and a leading www. dropped), so ARC's own
    arc-100.csv and arc-100.json read; the product address is fixed ("a fixed product_url") and must be the
    frozen one as written."""
    if host_key(item.host.strip()) != host_key(frozen.host):
        return f"host {item.host!r} is not {frozen.host!r}, the host of {item.id} in {ARC_TEST_SET}"
    if item.product_url.strip() != frozen.product_url:
        return (f"product_url {item.product_url!r} is not {frozen.product_url!r}, the product_url of {item.id} "
                f"in {ARC_TEST_SET}")
    return None


def other_station(item: TestItem) -> str | None:
    """Why a course row would run another station than its id names (its host or its product address on another
    station, or on no station at all), or None. The id is what the result is recorded and scored under: a row
    `s01` whose product_url is on s05 would put s05's outcome in s01's cell. The address may be on the public lab
    or on any lab's domain (the station is the first label of its host)."""
    host = host_key(item.host.strip())
    if host.partition(".")[0] != item.id:
        return f"host {item.host!r} is not on station {item.id}, which the row's id names"
    product_host = (urlsplit(item.product_url.strip()).hostname or "").lower()
    if product_host.partition(".")[0] != item.id:
        return f"product_url {item.product_url!r} is not on station {item.id}, which the row's id names"
    return None


def _row(row: dict[str, object], where: str) -> TestItem:
    values = {key: str(row.get(key) or "").strip() for key in ("id", "host", "product_url", "name")}
    for key in ("id", "host", "product_url"):
        if not values[key]:
            raise TestSetError(f"{where}: {key} is missing")
    try:  # checked as it is read: a bad address found after the batch is recorded would leave it unfinished
        check_http_url(values["product_url"], "product_url")
    except SettingsError as error:
        raise TestSetError(f"{where}: {error}") from None
    return TestItem(values["id"], values["host"], values["product_url"], values["name"])


def _csv_items(path: Path, text: str) -> list[tuple[str, TestItem]]:
    reader = csv.DictReader(io.StringIO(text))
    missing = {"id", "host", "product_url"} - set(reader.fieldnames or [])
    if missing:
        raise TestSetError(f"{path}: the CSV lacks the column(s) {', '.join(sorted(missing))}")
    try:
        return [(f"row {n}", _row(row, f"{path}: row {n}")) for n, row in enumerate(reader, start=2)]
    except csv.Error as error:
        raise TestSetError(f"{path}: not a CSV ({error})") from None


def _json_items(path: Path, text: str) -> list[tuple[str, TestItem]]:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise TestSetError(f"{path}: not JSON: {error}") from None
    stores = data.get("stores") if isinstance(data, dict) else None
    if not isinstance(stores, list):
        raise TestSetError(f'{path}: the JSON needs a "stores" array (ARC\'s arc-100.json shape)')
    return [(f"stores[{n}]", _row(s if isinstance(s, dict) else {}, f"{path}: stores[{n}]"))
            for n, s in enumerate(stores)]


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


REACH_SECONDS = 5.0
"""How long one store has to answer the reachability check (connecting, TLS and the answer's head)."""
REACH_AT_ONCE = 16
"""Stores checked at once."""


async def unreachable_stores(urls: Sequence[str], *, timeout: float = REACH_SECONDS, at_once: int = REACH_AT_ONCE,
                             checked: Callable[[int, int], None] | None = None) -> dict[str, str]:
    """Why each store that does not answer from this machine cannot be reached, by its product address: a HEAD
    of the address (a GET when HEAD is refused), `at_once` at a time, each within `timeout`. Any HTTP answer is an
    answer (a 403 is a store that blocks, which its run will show). `checked(done, reachable)` is told of each."""
    why: dict[str, str] = {}
    done = 0
    limit = anyio.CapacityLimiter(at_once)
    # Straight to the store, as the browser reaches a product page (no proxy from the environment).
    async with httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False,
                                 headers={"User-Agent": USER_AGENT}) as client:

        async def check(url: str) -> None:
            nonlocal done
            async with limit:
                problem = await _no_answer(client, url, timeout)
            if problem is not None:
                why[url] = problem
            done += 1
            if checked is not None:
                checked(done, done - len(why))

        async with anyio.create_task_group() as group:
            for url in dict.fromkeys(urls):
                group.start_soon(check, url)
    return why


async def _no_answer(client: httpx.AsyncClient, url: str, timeout: float) -> str | None:
    host = urlsplit(url).netloc
    try:
        with anyio.fail_after(timeout + 1):  # httpx's timeouts are per phase; this bounds the whole check
            response = await client.head(url)
            if response.status_code in (405, 501):  # HEAD refused: a GET's head, the body never read
                async with client.stream("GET", url):
                    pass
        return None
    except (TimeoutError, httpx.TimeoutException):
        return f"store unreachable from this machine ({host}: no answer within {timeout:g} s)"
    except httpx.HTTPError as error:
        return f"store unreachable from this machine ({host}: {_cause(error)})"


def _cause(error: BaseException) -> str:
    """The innermost reason in words (name resolution, refused connection, TLS), one line."""
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    number = error.errno if isinstance(error, OSError) and not isinstance(error, socket.gaierror) else None
    if number is not None and number > 0:
        return os.strerror(number)  # asyncio says "Connect call failed (...)" where the errno says why
    text = (getattr(error, "strerror", None) or str(error) or type(error).__name__).strip()
    return " ".join(text.split())
