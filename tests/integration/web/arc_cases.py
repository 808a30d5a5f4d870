"""A generator of submissions, each with the answer ARC's rules give it, written down by hand from ARC's code.

The reference is ARC's public repository abab7575/arc-open: `benchmark/src/submission.ts` (validateSubmission,
assertNotExample, submissionExample), `benchmark/src/arc100.ts` (ids and hosts). `ARC(message)` is the first
problem ARC answers (400), `TAKEN` a run it stores (201, or 200 with the first id when it is the same run again).
Each case covers one branch; together they cover every rule of the validator, in ARC's order, and the example.

The expected answers are not computed by our code: a case's answer is the literal message ARC's code throws.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

TAKEN = "taken"
SPEC = "arc-leaderboard-submission/v1"
OBJECT = "Send a JSON object. See /leaderboard/spec."
PATHS = "agent.path must be one of browser, ucp, mcp, acp, api, other."
OUTCOMES = "must be one of added_to_cart, checkout_reached, no_cart, blocked, error, not_attempted."
AT_LEAST_TEN = "Send at least 10 results that are not error or not_attempted."
STOP = "run.stopped_before_payment must be true. ARC-100 runs must stop before payment; never place real orders."
EXAMPLE = (
    "This is the example run. It is valid, but replace agent and results with your own run against ARC-100 v1 "
    "before submitting."
)
EXAMPLE_OUTCOMES = [
    "added_to_cart",
    "added_to_cart",
    "blocked",
    "checkout_reached",
    "added_to_cart",
    "no_cart",
    "added_to_cart",
    "blocked",
    "added_to_cart",
    "added_to_cart",
    "error",
    "added_to_cart",
]
# Hosts of ARC-100 v1 (arc-100.csv): 001 apc.fr, 002 chubbiesshorts.com.


@dataclass(frozen=True)
class Case:
    name: str
    body: bytes
    arc: str
    """TAKEN, or ARC's message for the first problem."""

    @property
    def is_object(self) -> bool:
        return self.body.lstrip().startswith(b"{")

    @property
    def is_json(self) -> bool:
        """Whether JSON.parse reads the body: NaN and Infinity are not JSON (Python's json reads them)."""
        try:
            json.loads(self.body, parse_constant=_refuse)
        except ValueError:
            return False
        return True


def _refuse(name: str) -> Any:
    raise ValueError(name)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def ids(count: int, start: int = 1) -> list[str]:
    return [f"arc100-v1-{i:03d}" for i in range(start, start + count)]


def base(now: datetime, name: str = "Differential Shopper") -> dict[str, Any]:
    started = now - timedelta(hours=3)
    return {
        "spec": SPEC,
        "test_set": "ARC-100 v1",
        "agent": {
            "name": name,
            "version": "2.0",
            "builder": "Diff Labs",
            "url": "https://agent.example.org/",
            "path": "browser",
            "model": "m-1",
        },
        "run": {
            "started_at": iso(started),
            "finished_at": iso(now - timedelta(hours=1)),
            "stopped_before_payment": True,
            "notes": "one attempt per store",
        },
        "results": [
            {
                "id": i,
                "outcome": "added_to_cart" if n % 3 else "no_cart",
                "at": iso(started + timedelta(minutes=n)),
                "evidence_url": f"https://runs.example.org/{i}.png",
                "steps": 10 + n,
                "seconds": 60 + n,
            }
            for n, i in enumerate(ids(12))
        ],
        "contact": "team@agent.example.org",
    }


def example(now: datetime) -> dict[str, Any]:
    """submissionExample(now) in submission.ts, as its code builds it (a valid run that ARC refuses to store)."""
    finished = datetime.fromtimestamp(((now.timestamp() - 3600) // 60) * 60, UTC)
    started = finished - timedelta(minutes=20 * len(EXAMPLE_OUTCOMES))
    results = []
    for n, outcome in enumerate(EXAMPLE_OUTCOMES):
        rid, at = f"arc100-v1-{n + 1:03d}", iso(started + timedelta(minutes=n * 20 + 4))
        results.append(
            {
                "id": rid,
                "outcome": outcome,
                "at": at,
                "evidence_url": f"https://example.com/runs/42/{rid}.png",
                "steps": 10 + n,
                "seconds": 60 + n * 7,
            }
            if outcome in ("added_to_cart", "checkout_reached")
            else {"id": rid, "outcome": outcome, "at": at}
        )
    return {
        "spec": SPEC,
        "test_set": "ARC-100 v1",
        "agent": {
            "name": "Example Shopper",
            "version": "0.3.1",
            "builder": "Example Labs",
            "url": "https://example.com/agent",
            "path": "browser",
            "model": "optional model name",
        },
        "run": {
            "started_at": iso(started),
            "finished_at": iso(finished),
            "stopped_before_payment": True,
            "notes": "Headless Chromium, default settings, one attempt per store.",
        },
        "results": results,
        "contact": "optional, private: an email or URL ARC can use to arrange verification",
    }


def _set(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    *parents, last = path.split(".")
    target: Any = data
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    key: Any = int(last) if last.isdigit() else last
    if value is _DELETE:
        del target[key]
    else:
        target[key] = value
    return data


_DELETE = object()


def cases(now: datetime) -> list[Case]:  # noqa: PLR0915 - one line a branch reads best as one list
    out: list[Case] = []
    b = base(now)

    def add(name: str, data: Any, arc: str) -> None:
        out.append(Case(name, data if isinstance(data, bytes) else json.dumps(data).encode(), arc))

    def field(name: str, path: str, value: Any, arc: str, data: dict[str, Any] | None = None) -> None:
        add(name, _set(data or b, path, value), arc)

    # The object, spec and test set (validateSubmission's first lines).
    add("the base run", b, TAKEN)
    for name, value in [("array", [b]), ("string", "run"), ("number", 1), ("null", None), ("true", True)]:
        add(f"a JSON {name} is not an object", value, OBJECT)
    for value in [_DELETE, "arc-leaderboard-submission/v2", "ARC-LEADERBOARD-SUBMISSION/V1", 1, None, f" {SPEC}"]:
        field(f"spec {value!r}", "spec", value, f'spec must be "{SPEC}".')
    for value in [_DELETE, "ARC-100 v2", "arc-100 v1", "ARC-100  v1", 100, None]:
        field(f"test_set {value!r}", "test_set", value, 'test_set must be "ARC-100 v1".')
    field(
        "a bad spec is found before a bad test set", "test_set", "x", f'spec must be "{SPEC}".', _set(b, "spec", "v0")
    )

    # agent.path: checked first, trimmed and lowercased.
    for value in ["ucp", "mcp", "acp", "api", "other", " Browser ", "MCP", "\tapi\n"]:
        field(f"agent.path {value!r} is taken", "agent.path", value, TAKEN)
    for value in [_DELETE, "telepathy", "", "browser,mcp", 1, None, ["browser"]]:
        field(f"agent.path {value!r}", "agent.path", value, PATHS)
    for value in [None, [], "agent", 3]:
        field(f"agent {value!r} reads as an empty object", "agent", value, PATHS)
    field("the path is checked before the name", "agent.name", "", PATHS, _set(b, "agent.path", "x"))

    # agent.name: required plain text of at most 60 characters (UTF-16 units), after cleaning.
    for value in [_DELETE, None, "", "   ", "<>", "\u0000\u0007", "\t\n", "\u00a0\u3000"]:
        field(f"agent.name {value!r} is missing", "agent.name", value, "agent.name is required.")
    for value in [1, True, ["a"], {"a": 1}]:
        field(f"agent.name {value!r}", "agent.name", value, "agent.name must be a string.")
    for value in ["x" * 61, "é" * 61, "😀" * 31, "a" + " " + "b" * 59]:
        field(
            f"agent.name {value[:3]!r}... of {len(value)} characters",
            "agent.name",
            value,
            "agent.name must be at most 60 characters.",
        )
    for value in [
        "x" * 60,
        "  " + "y" * 60 + "  ",
        "😀" * 30,
        "a <b> c",
        "A\u0000B",
        "tab\there",
        "z" * 58 + "<>",
        "Nordic   Shopper",
        "<script>alert(1)</script>",
        "x\ud800",
        "\udc00" + "y" * 59,
    ]:
        field(f"agent.name {value[:20]!r} is taken after cleaning", "agent.name", value, TAKEN)

    # The optional text fields: null and "" are absent; a string is cleaned; at most 40, 80, 80 characters.
    for key, limit in [("version", 40), ("builder", 80), ("model", 80)]:
        for value in [_DELETE, None, "", "   ", "v" * limit, "<b>bold</b>"]:
            field(f"agent.{key} {str(value)[:12]!r} is taken", f"agent.{key}", value, TAKEN)
        field(
            f"agent.{key} too long",
            f"agent.{key}",
            "v" * (limit + 1),
            f"agent.{key} must be at most {limit} characters.",
        )
        field(f"agent.{key} a number", f"agent.{key}", 2, f"agent.{key} must be a string.")
        field(f"agent.{key} false", f"agent.{key}", False, f"agent.{key} must be a string.")
    field(
        "the version is checked before the builder",
        "agent.builder",
        1,
        "agent.version must be a string.",
        _set(b, "agent.version", 1),
    )

    # agent.url and evidence_url: plain text of at most 500, then https with no user name or password.
    good_urls = [
        "https://agent.example.org",
        "HTTPS://Agent.Example.ORG/x",
        "https://agent.example.org:443/",
        "https://agent.example.org:8443/a?b=c#d",
        "https://@agent.example.org/",
        "https://[::1]/",
        "https://192.0.2.1/",
        "https:agent.example.org",
        "https:///agent.example.org",
        "<https://a.example>",
        "https://a.example/path with spaces",
        " https://a.example/ ",
        "https://bücher.example/",
        "https://a.example/" + "p" * 470,
        None,
        "",
    ]
    bad_urls = [
        "http://agent.example.org",
        "ftp://agent.example.org",
        "agent.example.org",
        "//agent.example.org",
        "javascript:alert(1)",
        "https://user:secret@agent.example.org",
        "https://user@agent.example.org",
        "https://:secret@agent.example.org",
        "https://",
        "https://exa mple.org",
        "https://a.example:99999",
        "https://[zz]/",
        "data:text/html,hi",
        "https://a.example:port/",
        "mailto:a@example.org",
    ]
    for value in good_urls:
        field(f"agent.url {str(value)[:30]!r} is taken", "agent.url", value, TAKEN)
        field(f"evidence_url {str(value)[:30]!r} is taken", "results.4.evidence_url", value, TAKEN)
    for value in bad_urls:
        field(f"agent.url {value[:30]!r}", "agent.url", value, "agent.url must be an https URL.")
        field(
            f"evidence_url {value[:30]!r}",
            "results.4.evidence_url",
            value,
            "results[4].evidence_url must be an https URL.",
        )
    # URL forms as the WHATWG parser reads them (a number is an IPv4 address; %-escapes in a host are decoded).
    for value in [
        "https://a..b/",
        "https://999/",
        "https://exa%6Dple.org",
        "https://a.example:0/",
        "https://A.EXAMPLE./x",
        "https://a.example/\\b",
        "https://a_b.example/",
        "https://0x7f.1/",
        "https:\\\\a.example",
        "https://0x/",
        "https://4294967295/",
        "https://a.example/%zz",
        "https://[::ffff:1.2.3.4]/",
    ]:
        field(f"agent.url {value!r} is taken", "agent.url", value, TAKEN)
    for value in [
        "https://1.2.3.999/",
        "https://08/",
        "https://1.08/",
        "https://1.2.3.4.5/",
        "https://%zz.example/",
        "https://a%20b.example/",
        "https://a.example.1/",
        "https://4294967296/",
    ]:
        field(f"agent.url {value!r}", "agent.url", value, "agent.url must be an https URL.")
    long_url = "https://a.example/" + "p" * 483
    field("agent.url over 500", "agent.url", long_url, "agent.url must be at most 500 characters.")
    field(
        "evidence_url over 500",
        "results.2.evidence_url",
        long_url,
        "results[2].evidence_url must be at most 500 characters.",
    )
    field("agent.url a number", "agent.url", 7, "agent.url must be a string.")
    field(
        "the url is checked before the model",
        "agent.model",
        1,
        "agent.url must be an https URL.",
        _set(b, "agent.url", "http://x.example"),
    )

    # run.stopped_before_payment must be true; a missing or non-object run reads as empty.
    for value in [_DELETE, False, "true", 1, None]:
        field(f"stopped_before_payment {value!r}", "run.stopped_before_payment", value, STOP)
    for value in [_DELETE, None, [], "run"]:
        field(f"run {value!r}", "run", value, STOP)
    field(
        "the agent is checked before the run",
        "run.stopped_before_payment",
        False,
        "agent.name is required.",
        _set(b, "agent.name", ""),
    )

    # Times: null and "" are absent; Date.parse; at most 10 minutes ahead; at most 90 days old.
    for key in ["run.started_at", "run.finished_at", "results.3.at"]:
        where = key.replace("results.3", "results[3]")
        for value in [
            _DELETE,
            None,
            "",
            iso(now - timedelta(days=89)),
            iso(now + timedelta(minutes=5)),
            (now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S.123Z"),
            (now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S.123456Z"),
            (now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+00:00"),
            (now - timedelta(hours=2)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M"),
            (now - timedelta(days=2)).strftime("%Y-%m-%d"),
            (now - timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%SZ"),
            (now - timedelta(hours=2)).strftime("%Y-%m-%dt%H:%M:%Sz"),
            (now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+0000"),
            (now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S.5-0130"),
            (now - timedelta(days=2)).strftime("%Y-%m-%dZ"),
            (now - timedelta(days=2)).strftime("+00%Y-%m-%dT%H:%M:%SZ"),
        ]:
            field(f"{key} {value!r} is taken", key, value, TAKEN)
        for value in [
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-10-09T25:00:00Z",
            "10/09/2026x",
            1700000000000,
            True,
            ["2026-10-09"],
            "now",
        ]:
            field(f"{key} {value!r}", key, value, f"{where} must be an ISO 8601 timestamp.")
        for value in [
            iso(now + timedelta(minutes=11)),
            iso(now + timedelta(days=400)),
            (now + timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S+01:00"),
        ]:
            field(f"{key} {value!r} in the future", key, value, f"{where} is in the future.")
        for value in [iso(now - timedelta(days=91)), "2020-01-01T00:00:00Z", "1999-12-31"]:
            field(f"{key} {value!r} too old", key, value, f"{where} is older than 90 days. Re-run against ARC-100 v1.")
    field(
        "started is checked before finished",
        "run.finished_at",
        "x",
        "run.started_at is in the future.",
        _set(b, "run.started_at", iso(now + timedelta(days=1))),
    )
    for value in ["n" * 500, "<b>notes</b>", "line\nline", None, ""]:
        field(f"run.notes {str(value)[:10]!r} is taken", "run.notes", value, TAKEN)
    field("run.notes over 500", "run.notes", "n" * 501, "run.notes must be at most 500 characters.")
    field("run.notes a number", "run.notes", 5, "run.notes must be a string.")
    field("run.notes 500 after cleaning", "run.notes", "  " + "n" * 500 + "\n\n", TAKEN)

    # results: an array of at most 100; each names an ARC-100 store by id (wins) or host, once.
    for value in [_DELETE, None, {"0": {}}, "results"]:
        field(f"results {value!r}", "results", value, "results must be an array.")
    field("no results", "results", [], AT_LEAST_TEN)
    full = [{"id": i, "outcome": "no_cart"} for i in ids(100)]
    field("all 100 stores", "results", full, TAKEN)
    field(
        "101 results",
        "results",
        [*full, {"id": "arc100-v1-001", "outcome": "error"}],
        "At most 100 results (one per ARC-100 store).",
    )
    store = "results[5]: id must be an ARC-100 v1 store id (arc100-v1-001 ... arc100-v1-100) or host."
    for value in ["arc100-v1-000", "arc100-v1-101", "arc100-v1-999", "ARC100-V1-006", "arc100-v2-006", "6", ""]:
        field(f"id {value!r}", "results.5.id", value, store)
    for value in [None, 6, "not a result", ["arc100-v1-006"]]:
        field(f"result {value!r}", "results.5", value, store)
    field(
        "a wrong id wins over a right host",
        "results.5.host",
        "stevemadden.com",
        store,
        _set(b, "results.5.id", "arc100-v1-900"),
    )
    field("an id wins over a wrong host", "results.5.host", "nowhere.example", TAKEN)
    field("an id with spaces", "results.5.id", "  arc100-v1-006\n", TAKEN)
    no_id = _set(b, "results.0.id", _DELETE)
    for value in ["apc.fr", "APC.FR", "www.apc.fr", "apc.fr.", " www.APC.fr. "]:
        field(f"host {value!r}", "results.0.host", value, TAKEN, no_id)
    for value in ["https://apc.fr", "apc.fr/", "shop.apc.fr", "apc.fr..", "www.www.apc.fr", "", 1]:
        field(f"host {value!r}", "results.0.host", value, store.replace("[5]", "[0]"), no_id)
    field("a numeric id falls back to the host", "results.0.host", "apc.fr", TAKEN, _set(b, "results.0.id", 1))
    field("a store twice by id", "results.1.id", "arc100-v1-001", "results[1]: arc100-v1-001 appears twice.")
    field(
        "a store twice by host",
        "results.1",
        {"host": "www.apc.fr", "outcome": "no_cart"},
        "results[1]: arc100-v1-001 appears twice.",
    )
    for value in [" Added_To_Cart ", "CHECKOUT_REACHED", "blocked", "error", "not_attempted"]:
        field(f"outcome {value!r}", "results.7.outcome", value, TAKEN)
    for value in [_DELETE, "success", "", "added to cart", 1, None]:
        field(f"outcome {value!r}", "results.7.outcome", value, f"results[7].outcome {OUTCOMES}")
    field(
        "the store is checked before the outcome",
        "results.7.outcome",
        "x",
        store.replace("[5]", "[7]"),
        _set(b, "results.7.id", "x"),
    )
    field(
        "the outcome is checked before the time",
        "results.7.at",
        "x",
        f"results[7].outcome {OUTCOMES}",
        _set(b, "results.7.outcome", "x"),
    )
    field(
        "the time is checked before the evidence",
        "results.7.evidence_url",
        "http://x",
        "results[7].at must be an ISO 8601 timestamp.",
        _set(b, "results.7.at", "x"),
    )
    field(
        "an earlier result's problem comes first",
        "results.2.outcome",
        "x",
        f"results[2].outcome {OUTCOMES}",
        _set(b, "results.9.id", "x"),
    )

    # steps and seconds: out of range or not numbers are dropped, never refused.
    for key, limit in [("steps", 10_000), ("seconds", 86_400)]:
        for value in [-1, limit + 1, "5", True, None, [], 2.5, limit, 0, 1e-9]:
            field(f"{key} {value!r} is dropped or kept", f"results.6.{key}", value, TAKEN)
    raw = json.dumps(b).replace('"steps": 16', '"steps": 1e400').encode()
    add("steps 1e400 (Infinity) is dropped", raw, TAKEN)
    for constant in ["NaN", "Infinity", "-Infinity"]:  # not JSON: JSON.parse throws, and ARC's first message
        add(
            f"steps {constant} is not JSON",
            json.dumps(b).replace('"steps": 16', f'"steps": {constant}').encode(),
            OBJECT,
        )

    # n: at least 10 results that are not error or not_attempted.
    nine = _set(
        b,
        "results",
        [{"id": i, "outcome": "added_to_cart"} for i in ids(9)]
        + [{"id": i, "outcome": o} for i, o in zip(ids(3, 10), ["error", "not_attempted", "error"], strict=True)],
    )
    add("nine counted", nine, AT_LEAST_TEN)
    add("ten counted", _set(nine, "results.9.outcome", "blocked"), TAKEN)
    add("ten results, all errors", _set(b, "results", [{"id": i, "outcome": "error"} for i in ids(10)]), AT_LEAST_TEN)

    # contact: private plain text of at most 200; checked after the results.
    for value in ["c" * 200, None, "", "<a@b.example>"]:
        field(f"contact {str(value)[:10]!r} is taken", "contact", value, TAKEN)
    field("contact over 200", "contact", "c" * 201, "contact must be at most 200 characters.")
    field("contact a number", "contact", 5, "contact must be a string.")
    field("n is checked before the contact", "contact", 5, AT_LEAST_TEN, nine)

    # Unknown fields are ignored at every level, ours too.
    for path, value in [
        ("extra", {"x": 1}),
        ("agent.colour", "blue"),
        ("run.weather", [1]),
        ("results.0.note", "<b>x</b>"),
        ("results.0.receipt", 12345),
        ("results.0.receipt", "r" * 5000),
        ("results.1.host", 42),
        ("$schema", "x"),
    ]:
        field(f"unknown field {path} {str(value)[:8]!r}", path, value, TAKEN)

    # The example: valid, and refused on submit (assertNotExample) only as Example Shopper of Example Labs.
    ex = example(now)
    add("the spec's example", ex, EXAMPLE)
    add("the example with padded name", _set(ex, "agent.name", "  Example\tShopper "), EXAMPLE)
    add("the example renamed", _set(ex, "agent.name", "Real Shopper"), TAKEN)
    add("the example of another builder", _set(ex, "agent.builder", "Real Labs"), TAKEN)
    add("the example, lowercased name", _set(ex, "agent.name", "example shopper"), TAKEN)
    add("the example without a builder", _set(ex, "agent.builder", _DELETE), TAKEN)
    add("the example, its validation first", _set(ex, "run.stopped_before_payment", False), STOP)
    return out
