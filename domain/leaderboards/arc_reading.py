"""How ARC's validator reads the parts of a submission: plain text, timestamps, https URLs, numbers and hosts.

ARC's server is JavaScript (abab7575/arc-open, `benchmark/src/submission.ts`), so "as ARC reads it" means as the
JavaScript built-ins it calls read it: `String.prototype.replace` with `\\s` and `trim()` (JavaScript's own set
of white space, not Python's), `.length` (UTF-16 code units, so an emoji counts 2), `Math.round` (halves up),
`Date.parse` (the ECMAScript date-time format, read by V8) and `new URL()` (the WHATWG URL parser). Each function
here is written from that behaviour, in our own Python; the docstring says which call it stands for.
"""

from __future__ import annotations

import ipaddress
import math
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote_to_bytes

JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""JavaScript's `\\s` and `trim()`: WhiteSpace and LineTerminator (U+0085 is not one; U+FEFF is)."""

_MARKUP_OR_CONTROL = re.compile("[\x00-\x1f\x7f<>]")
_SPACES = re.compile(f"[{JS_SPACE}]+")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def plain_text(value: str) -> str:
    """ARC's `text()` cleaning (submission.ts): control characters and angle brackets become spaces, runs of
    white space one space, trimmed. What is left holds no control character and no markup."""
    return _SPACES.sub(" ", _MARKUP_OR_CONTROL.sub(" ", value)).strip(" ")


def storable(value: str) -> str:
    """A lone surrogate (JSON allows `\\ud800`) becomes U+FFFD, so the text can be stored as UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", value)


def js_trim(value: str) -> str:
    """`String.prototype.trim()`."""
    return re.sub(f"^[{JS_SPACE}]+|[{JS_SPACE}]+$", "", value)


def js_length(value: str) -> int:
    """`.length`: UTF-16 code units."""
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


def js_round(value: float) -> int:
    """`Math.round`: the nearest integer, halves toward +infinity (Python's round() goes to even)."""
    floor = math.floor(value)
    return int(floor + 1 if value - floor >= 0.5 else floor)


def host_key(host: str) -> str:
    """How `arc100ByHost` (arc100.ts) compares hosts: lowercased, one trailing dot and a leading www. removed."""
    host = host.lower()
    host = host[:-1] if host.endswith(".") else host
    return host[4:] if host.startswith("www.") else host


# --- Date.parse -------------------------------------------------------------------------------------------

_ISO = re.compile(
    r"^(?P<year>[+-]\d{6}|\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:[Tt ](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?)?"
    r"(?P<zone>[Zz]|[+-]\d{2}:?\d{2})?$"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_time_ms(text: str) -> int | None:
    """`Date.parse` for the ECMAScript date-time format (ISO 8601's profile), as V8 reads it: milliseconds since
    the epoch, or None where it gives NaN. A date alone is UTC; a time without a zone is the server's local time,
    which on ARC's servers (and ours) is UTC. V8 takes any number of fraction digits (the first three count),
    a space or t for the T, z for Z, +0100 for +01:00, and a day up to 31 in any month (31 February is 3 March).

    V8 also reads some dates that are not ISO 8601 ("Oct 9 2026"); ARC's message asks for ISO 8601 and so do we:
    that difference is listed in docs/arc.md."""
    match = _ISO.match(text)
    if match is None:
        return None
    year = int(match["year"])
    if match["year"] == "-000000":
        return None
    month, day = int(match["month"] or 1), int(match["day"] or 1)
    hour, minute, second = int(match["hour"] or 0), int(match["minute"] or 0), int(match["second"] or 0)
    millis = int((match["fraction"] or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return None
    offset = 0
    if match["zone"] and match["zone"] not in "Zz":
        sign = 1 if match["zone"][0] == "+" else -1
        zone_hours, zone_minutes = int(match["zone"][1:3]), int(match["zone"][-2:])
        if zone_hours > 23 or zone_minutes > 59:
            return None
        offset = sign * (zone_hours * 60 + zone_minutes)
    days = _days_from_civil(year, month, 1) + day - 1
    return (((days * 24 + hour) * 60 + minute - offset) * 60 + second) * 1000 + millis


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date, for any year (datetime stops at 1..9999)."""
    year -= month <= 2
    era = year // 400
    of_era = year - era * 400
    of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    of_cycle = of_era * 365 + of_era // 4 - of_era // 100 + of_year
    return era * 146097 + of_cycle - 719468


def iso_of_ms(ms: int) -> str:
    """`Date.prototype.toISOString()`: 2026-10-09T11:14:00.000Z."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ms_of(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(milliseconds=1)


# --- new URL() --------------------------------------------------------------------------------------------

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):(.*)$", re.DOTALL)
_FORBIDDEN_IN_HOST = set(" #%/:<>?@[\\]^|\x7f") | {chr(c) for c in range(0x20)}
_PATH_ESCAPES = {c: f"%{ord(c):02X}" for c in ' "<>`{}^'}
_QUERY_ESCAPES = {c: f"%{ord(c):02X}" for c in " \"<>'"}
_FRAGMENT_ESCAPES = {c: f"%{ord(c):02X}" for c in ' "<>`'}


class NotAnHttpsUrl(ValueError):
    """`new URL()` threw, or the URL is not https, or it carries a user name or password."""


def https_url(text: str) -> str:
    """ARC's `httpsUrl()` (submission.ts): `new URL(text)` must parse, with protocol https: and neither user name
    nor password; the answer is the URL as `toString()` writes it (scheme and host lowercased, the default port
    dropped, an empty path written /, spaces and quotes percent-encoded). Raises NotAnHttpsUrl otherwise.

    Written from the WHATWG URL standard for what a submitter sends (domain names, IP addresses, ports, paths,
    queries, fragments); a user name or password is refused, so it is never stored or shown."""
    match = _SCHEME.match(text)
    if match is None or match[1].lower() != "https":
        raise NotAnHttpsUrl(text)
    rest = match[2].lstrip("/\\")  # a special scheme ignores any slashes before the authority
    end = min((i for i in (rest.find(c) for c in "/\\?#") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        userinfo, authority = authority.rsplit("@", 1)
        user, _, password = userinfo.partition(":")
        if user or password:
            raise NotAnHttpsUrl("credentials")
    host, port = _host_and_port(authority)
    return f"https://{host}{port}{_tail(tail)}"


def _host_and_port(authority: str) -> tuple[str, str]:
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            raise NotAnHttpsUrl(authority)
        try:
            host = f"[{ipaddress.IPv6Address(authority[1:close]).compressed}]"
        except ValueError:
            raise NotAnHttpsUrl(authority) from None
        after = authority[close + 1:]
        if after and not after.startswith(":"):
            raise NotAnHttpsUrl(authority)
        return host, _port(after[1:] if after else "")
    name, _, port = authority.partition(":")
    return _domain(name), _port(port)


def _port(text: str) -> str:
    if not text:
        return ""
    if not text.isascii() or not text.isdigit() or int(text) > 65535:
        raise NotAnHttpsUrl(text)
    return "" if int(text) == 443 else f":{int(text)}"


def _domain(name: str) -> str:
    """The host parser for a special scheme: percent-decoded, to ASCII (IDNA), no forbidden code point, and a
    name whose last label is a number read as an IPv4 address (999 is 0.0.3.231, 0x7f.1 is 127.0.0.1)."""
    try:
        name = unquote_to_bytes(name).decode("utf-8")
        ascii_name = name.lower() if name.isascii() else name.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise NotAnHttpsUrl(name) from None
    if not ascii_name or set(ascii_name) & _FORBIDDEN_IN_HOST:
        raise NotAnHttpsUrl(name)
    labels = ascii_name.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    if _ipv4_number(labels[-1]) is not None or re.fullmatch(r"[0-9]+", labels[-1]):
        return _ipv4(labels, name)
    return ascii_name


def _ipv4_number(label: str) -> int | None:
    """A WHATWG IPv4 number: 0x hex, a leading 0 octal, else decimal; None when it is none of them."""
    if re.fullmatch(r"0[xX][0-9a-fA-F]*", label):
        return int(label[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        return int(label, 8) if re.fullmatch(r"0[0-7]+", label) else None
    if re.fullmatch(r"[0-9]+", label):
        return int(label)
    return None


def _ipv4(labels: list[str], name: str) -> str:
    numbers = [_ipv4_number(label) for label in labels]
    if len(numbers) > 4 or any(n is None for n in numbers):
        raise NotAnHttpsUrl(name)
    parts = [n for n in numbers if n is not None]
    if any(n > 255 for n in parts[:-1]) or parts[-1] >= 256 ** (5 - len(parts)):
        raise NotAnHttpsUrl(name)
    address = parts[-1] + sum(n * 256 ** (3 - i) for i, n in enumerate(parts[:-1]))
    return str(ipaddress.IPv4Address(address))


def _tail(tail: str) -> str:
    path, hash_, fragment = tail.partition("#")
    path, question, query = path.partition("?")
    path = _escape(path.replace("\\", "/"), _PATH_ESCAPES) or "/"
    written = path + (question + _escape(query, _QUERY_ESCAPES) if question else "")
    return written + (hash_ + _escape(fragment, _FRAGMENT_ESCAPES) if hash_ else "")


def _escape(text: str, escapes: dict[str, str]) -> str:
    out = []
    for char in text:
        if char in escapes:
            out.append(escapes[char])
        elif ord(char) > 0x7E:
            out.append("".join(f"%{b:02X}" for b in char.encode("utf-8", "replace")))
        else:
            out.append(char)
    return "".join(out)
