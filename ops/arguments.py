"""Argument types for `canitbuy`: a value typed on the command line is checked where argparse reads it.

A malformed or out-of-range value (a week that is not an ISO week, `--repeats 0`, an unknown station or model, a
lab address that is not one) is a usage error wherever it is typed: argparse prints one line naming the option
and exits 2, the same for every command. What only the record or the world can refuse (a week not published, a
file that is not there, a service that does not answer) stays a failure, exit 1.

Each type is a callable argparse calls with the text; it raises `argparse.ArgumentTypeError`, whose message
argparse prints after the option's name. Nothing here imports the browser or the database drivers: the model
check imports the line-up only when a model is typed.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from datetime import UTC, datetime
from uuid import UUID


def iso_week(text: str) -> str:
    """An ISO week such as 2026-W48, normalised."""
    from domain.week.weeks import WeekError, parse_week

    try:
        return parse_week(text)
    except WeekError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """A whole number from `low` to `high` (ASCII digits only: '²' is a digit to Python, not a number to int)."""

    def read(text: str) -> int:
        digits = text.strip()
        if not (digits.isascii() and digits.isdigit()) or not low <= int(digits) <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {low} to {high}")
        return int(digits)

    read.__name__ = "whole number"  # argparse names the type in its fallback message
    return read


def port(text: str) -> int:
    """A TCP port to listen on, 1 to 65535. Checked here because the server would not refuse a larger one: the
    address lookup wraps it (99999 listens on 34463), so the port announced would not be the one served."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or not 1 <= int(digits) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number from 1 to 65535")
    return int(digits)


def seconds(low: float, high: float) -> Callable[[str], float]:
    """A number of seconds above `low` and at most `high` (not nan, not infinite)."""

    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and low < value <= high):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above {low:g} and at most "
                                             f"{high:g}")
        return value

    read.__name__ = "seconds"
    return read


def station(text: str) -> str:
    """A station of the current course."""
    from domain.courses.course import load_course

    code = text.strip()
    if code not in load_course().codes:
        raise argparse.ArgumentTypeError(f"no station {text!r} in the course (s01..s18)")
    return code


def comma_separated(one: Callable[[str], str], example: str) -> Callable[[str], list[str]]:
    """Names separated by commas, each read by `one`, at least one, each once, in the order typed."""

    def read(text: str) -> list[str]:
        names = [one(part) for part in text.split(",") if part.strip()]
        if not names:
            raise argparse.ArgumentTypeError(f"name at least one, e.g. {example}")
        return list(dict.fromkeys(names))

    read.__name__ = f"list of {one.__name__}s"
    return read


def model(text: str) -> str:
    """A built-in agent or a line-up model."""
    from adapters.models.lineup import BASELINES, entrant

    name = text.strip()
    if name not in BASELINES and entrant(name) is None:
        raise argparse.ArgumentTypeError(f"no built-in agent or line-up model named {text!r}")
    return name


stations = comma_separated(station, "s01,s05")
"""Comma-separated stations of the current course."""
models = comma_separated(model, "baseline-robust,baseline-naive")
"""Comma-separated built-in agents or line-up models."""


def lineup_model(text: str) -> str:
    """A model of the weekly line-up (not a built-in agent: those need no gateway)."""
    from adapters.models.lineup import entrant

    name = text.strip()
    if entrant(name) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not in the line-up")
    return name


def http_url(text: str) -> str:
    """An http(s) address with a host and, if given, a port from 1 to 65535."""
    from adapters.settings import SettingsError, check_http_url

    try:
        return check_http_url(text.strip())
    except SettingsError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def https_url(text: str) -> str:
    """An https address (public ones: evidence links a reader follows)."""
    url = http_url(text)
    if not url.startswith("https://"):
        raise argparse.ArgumentTypeError(f"{text!r} must be an https:// address")
    return url


def uuid(what: str) -> Callable[[str], UUID]:
    """An id as the command that made it printed it (a UUID); `what` names it in the error."""

    def read(text: str) -> UUID:
        try:
            return UUID(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} (a UUID)") from None

    read.__name__ = what
    return read


def utc_time(text: str) -> datetime:
    """An ISO 8601 time; one without a zone is read as UTC."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time such as 2026-12-07T06:30Z") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
