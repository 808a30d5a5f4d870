"""The reading station's fetcher: a store's pages over HTTP with httpx, no JavaScript, every fetch recorded.

Both readers use it, the built-in one (adapters/agents/reading.py) and the model's (adapters/models/reader.py);
it imports neither, so the arrows go one way.

A store the crawl could not reach is our error, not a page to read past (StoreUnreachableError): the crawl stops
and the run is cut short, never graded, and the model's reader asks no model.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import anyio
import httpx

from domain.agent.verdicts import FetchedPage

USER_AGENT = "CanItBuyAgent/1.0"
MAX_PAGES = 20
FETCH_SECONDS = 10.0
"""How long one request may go unanswered before the store counts as not reached."""
DEFAULT_PORTS = {"http": 80, "https": 443}
_SKIP = {"script", "style", "noscript", "template", "svg"}
UNREACHED = "the reading station could not reach the store: "
"""How the run's cut-short detail begins when the crawl could not reach the store."""
OUTAGE_STATUSES = frozenset({502, 503, 504})
"""Answers of a gateway whose store behind it did not answer (bad gateway, unavailable, gateway time-out): no page."""
TOO_MANY = 429
PACE_WAIT_SECONDS = 20.0
"""How long one crawl waits in all for stores that answer 429 (the lab's rate limit, or a store's): each Retry-After
is honoured (1 s when the answer gives none it reads), and a page refused past it means the store could not be read
at our pace, our error, not a page the reader reads past."""


class StoreUnreachableError(RuntimeError):
    """The reading station could not reach the store: our error (the lab is ours), so the run is cut short and
    repeated, never graded, and no model is asked to answer from pages it never got.

    Raised, and the crawl stopped, when a request got no answer at all (refused, reset, closed or timed out), when
    the start page answered with a server error (5xx: there is nothing to read from), when any page answered 502,
    503 or 504 (a gateway whose store is not answering), or when a page still answered 429 after the crawl had waited
    what its Retry-After asked for, up to PACE_WAIT_SECONDS in all (our crawl's pace, not the reader's reading). Any
    other answer is a page the reader reads past, recorded with its status: a 404 for a page the store does not have,
    another 4xx, a 500 on a page past the start."""

    def __init__(self, message: str, *, fetched: list[FetchedPage]) -> None:
        super().__init__(message)
        self.fetched = fetched
        """Every request made until then, the failed one last."""


@dataclass
class StorePage:
    url: str
    text: str
    json_ld: list[object] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


class _Extract(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.links: list[str] = []
        self.blocks: list[str] = []
        self._skip = 0
        self._ld = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("href"):
            self.links.append(str(values["href"]))
        if tag == "script" and values.get("type") == "application/ld+json":
            self._ld = True
        if tag in _SKIP:
            self._skip += 1
        if tag in ("p", "li", "h1", "h2", "h3", "dt", "dd", "tr", "br", "button", "label"):
            self.text.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
            self._ld = False

    def handle_data(self, data: str) -> None:
        if self._ld:
            self.blocks.append(data)
        elif not self._skip:
            self.text.append(data)


def parse_page(url: str, html: str) -> StorePage:
    parser = _Extract()
    parser.feed(html)
    found: list[object] = []
    for block in parser.blocks:
        try:
            found.append(json.loads(block))
        except ValueError:
            continue
    text = re.sub(r"[ \t]+", " ", "".join(parser.text))
    text = re.sub(r"\s*\n\s*", "\n", text).strip()
    if urlsplit(url).path.endswith(".xml"):  # a sitemap: its addresses are its links
        parser.links += re.findall(r"<loc>([^<]+)</loc>", html)
    return StorePage(url=url, text=text, json_ld=found, links=[urljoin(url, link) for link in parser.links])


Origin = tuple[str, str, int]
"""Scheme, host and port, normalised: lower case, the scheme's default port written out."""


def origin_of(url: str) -> Origin | None:
    """The URL's origin, or None for one the fetcher never requests: not http(s), no host, a port that is not a
    number, or a user name or password before the host (`http://store@elsewhere/` is elsewhere's)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or "@" in parts.netloc:
        return None
    return scheme, host, port if port is not None else DEFAULT_PORTS[scheme]


def request_target(url: str) -> str:
    """The path and query the URL asks its origin for (what follows the origin's base in the request)."""
    parts = urlsplit(url)
    path = parts.path if parts.path.startswith("/") else "/" + parts.path
    return path + (f"?{parts.query}" if parts.query else "")


class StoreFetcher:
    """Fetches pages of one store, and only of its origin (scheme, host and port compared, not the address's
    text); *.localhost names are reached on loopback with the Host header."""

    def __init__(self, start_url: str, *, max_pages: int = MAX_PAGES, timeout: float = FETCH_SECONDS) -> None:
        origin = origin_of(start_url)
        if origin is None:
            raise ValueError(f"not a store address the fetcher reads: {start_url}")
        parts = urlsplit(start_url)
        scheme, host, port = self.origin = origin
        self.host = parts.netloc
        local = host.endswith(".localhost")
        self._base = f"{scheme}://127.0.0.1:{port}" if local else f"{scheme}://{parts.netloc}"
        self._http = httpx.AsyncClient(timeout=timeout, headers={"User-Agent": USER_AGENT, "Host": self.host})
        self.max_pages = max_pages
        self.fetched: list[FetchedPage] = []
        """Every request made, in order, answered or not: what a reader run records for auditors."""
        self.paced = 0.0
        """Seconds waited on 429 answers so far (at most PACE_WAIT_SECONDS)."""

    async def crawl(self, start_url: str, wanted: str) -> list[StorePage]:
        """Breadth-first through the store, pages that name what is wanted first (the product, help pages)."""
        queue, seen = deque([start_url, urljoin(start_url, "/sitemap.xml")]), set[str]()
        pages: list[StorePage] = []
        while queue and len(pages) < self.max_pages:
            url = queue.popleft().split("#")[0]
            if url in seen or origin_of(url) != self.origin:
                continue
            seen.add(url)
            page = await self._get(url)
            if page is None:
                continue
            pages.append(page)
            for link in sorted(page.links, key=lambda u: not _promising(u, wanted)):
                (queue.appendleft if _promising(link, wanted) else queue.append)(link)
        return pages

    async def _get(self, url: str) -> StorePage | None:
        start = not self.fetched  # the first request is the start page's
        while (response := await self._answer(url)) is not None and response.status_code == TOO_MANY:
            wait = _retry_after(response.headers.get("retry-after"))
            if self.paced + wait > PACE_WAIT_SECONDS:
                raise StoreUnreachableError(
                    f"{UNREACHED}{url} answered {TOO_MANY} Too Many Requests, asking to wait {wait:g} s more after "
                    f"{self.paced:g} s waited in this crawl (it waits {PACE_WAIT_SECONDS:g} s at most)",
                    fetched=self.fetched)
            self.paced += wait
            await anyio.sleep(wait)
        if response is None:
            return None  # an answer that could not be read (its encoding): a page read past
        status = response.status_code
        if status in OUTAGE_STATUSES or (start and status >= 500):
            which = "the start page " if start else ""
            raise StoreUnreachableError(f"{UNREACHED}{which}{url} answered {status} {response.reason_phrase}".strip(),
                                        fetched=self.fetched)
        if status != 200:
            return None
        return parse_page(url, response.text)

    async def _answer(self, url: str) -> httpx.Response | None:
        """One request, recorded: its answer, None for one whose body could not be decoded, StoreUnreachableError
        when nothing answered."""
        try:
            response = await self._http.get(self._base + request_target(url))
        except httpx.HTTPError as error:
            self.fetched.append(FetchedPage(url=url, status=None, sha256=None, error=type(error).__name__))
            if isinstance(error, httpx.TransportError):  # no answer at all: the store is not reachable
                said = " ".join(str(error).split())
                raise StoreUnreachableError(f"{UNREACHED}{type(error).__name__} on {url}"
                                            + (f" ({said})" if said else ""), fetched=self.fetched) from error
            return None
        self.fetched.append(FetchedPage(url=url, status=response.status_code,
                                        sha256=hashlib.sha256(response.content).hexdigest()))
        return response

    async def aclose(self) -> None:
        await self._http.aclose()


@dataclass
class Crawl:
    pages: list[StorePage]
    """The pages read (status 200), at most max_pages."""
    fetched: list[FetchedPage]
    """Every request made, including the ones that failed."""


async def crawl_store(start_url: str, question: str, *, max_pages: int = MAX_PAGES) -> Crawl:
    """The store's pages for the read question, with the record of every fetch; StoreUnreachableError when the
    store could not be reached."""
    fetcher = StoreFetcher(start_url, max_pages=max_pages)
    try:
        pages = await fetcher.crawl(start_url, wanted=product_asked(question))
    finally:
        await fetcher.aclose()
    return Crawl(pages=pages, fetched=fetcher.fetched)


def _retry_after(value: str | None) -> float:
    """The seconds a 429 asks to wait: its Retry-After in seconds (half a second at least), else 1 (a date, or
    nothing, reads as 1 s)."""
    try:
        seconds = float(value) if value is not None and value.strip().isdigit() else 1.0
    except ValueError:
        seconds = 1.0
    return max(seconds, 0.5)  # a store answering "retry at once" forever still ends the crawl within its wait


def _promising(url: str, wanted: str) -> bool:
    slug = re.sub(r"[^a-z0-9]+", "-", wanted.lower()).strip("-")
    path = urlsplit(url).path.lower()
    return bool(slug and slug in path) or any(w in path for w in ("delivery", "shipping", "return"))


def product_asked(question: str) -> str:
    found = re.search(r"(?:Are|Is) the (.+?) (?:running )?shoes", question)
    return found.group(1) if found else ""
