"""`canitbuy audit export | verify | replay`: auditors' access to published weeks (docs/audit-format.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.week import anchors
from domain.week.anchors import WEEK_FORMAT, Expected, WeekPublications
from domain.week.audit import AuditError, check_lines, export_lines, week_events
from domain.week.publications import Publication, standing
from domain.week.publishing import NotPublishedError, UnknownWeekError
from ops import arguments
from ops.cli import CommandError, UsageError
from ops.commands import HELP, Subcommands
from ops.files import file_path, refuse_inside_data_folder, write_whole

STANDING = ("the standing publication (the week's first final one; while the week is in progress, its newest "
            "provisional one)")

VERIFY_DESCRIPTION = """\
Check an audit file: its hash chain, then recompute the week's ranking and Matrix and the sha256 of its events from
the file alone. The hashes in the file's header only show that the file agrees with itself (whoever wrote the file
wrote them too), so give the published values, from the week's page or its JSON, to check it is what was published:

  canitbuy audit verify week.jsonl --published https://canitbuy.com/api/weeks/2026-W48.json
  canitbuy audit verify week.jsonl --ranking-sha256 HEX --matrix-sha256 HEX --events-sha256 HEX

Exit 0: the file agrees with itself and with every value given (it says which were given; with none, it prints
the three sha256 to compare and says the file is self-consistent only). Exit 1: one line naming the first broken
line, or what differs from the published values, or why they could not be read. Exit 2: a usage error."""


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    audit = subcommands.add_parser("audit", help=HELP["audit"])
    sub = audit.add_subparsers(dest="audit_command", metavar="AUDIT_COMMAND", required=True)
    export = sub.add_parser("export", help="write the events a week's publication depended on (JSON Lines)")
    export.add_argument("--week", required=True, type=arguments.iso_week, help="ISO week, e.g. 2026-W48")
    export.add_argument("--out", required=True, type=file_path,
                        help="file to write, e.g. week.jsonl (outside the data folder; written whole or not at all)")
    export.add_argument("--publication", type=arguments.whole_number(1, 10_000), default=None,
                        help=f"which publication (1 = the first; default: {STANDING})")
    export.set_defaults(handler=export_week)
    verify = sub.add_parser(
        "verify", help="recompute ranking, Matrix and events sha256 from the file; check them against the published "
        "ones", description=VERIFY_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    verify.add_argument("file", type=file_path, help="the audit file, e.g. canitbuy-2026-W48-publication-1.jsonl")
    verify.add_argument("--published", metavar="WEEK_JSON",
                        help="the week's published values to check against: its JSON as a file or an address, "
                        "e.g. https://canitbuy.com/api/weeks/2026-W48.json")
    for name, what in (("ranking", "ranking"), ("matrix", "Matrix"), ("events", "events")):
        verify.add_argument(f"--{name}-sha256", type=sha256_text, metavar="HEX",
                            help=f"the published {what} sha256 to check against (as the week's page shows it)")
    verify.set_defaults(handler=verify_file)
    replay = sub.add_parser("replay", help="print a week's ranking JSON replayed from the log")
    replay.add_argument("--week", required=True, type=arguments.iso_week, help="ISO week, e.g. 2026-W48")
    which = replay.add_mutually_exclusive_group()
    which.add_argument("--as-published", dest="as_published", action="store_true", default=True,
                       help=f"the bytes of {STANDING}, replayed up to its position (default)")
    which.add_argument("--publication", type=arguments.whole_number(1, 10_000), default=None, metavar="N",
                       help="the bytes of the week's publication N (1 = the first), replayed up to its position")
    which.add_argument("--as-corrected", dest="as_published", action="store_false",
                       help="what the whole log says now, corrections applied")
    replay.add_argument("--matrix", action="store_true", help="print the Matrix instead of the ranking")
    replay.set_defaults(handler=replay_week)
    return audit



def _chosen(week: str, publications: Sequence[Publication], number: int | None) -> int:
    """The index of publication `number` (1-based), or of the standing one when None; CommandError if none."""
    if not publications:
        raise CommandError(f"week {week} has not been published")
    if number is None:
        return standing(publications)
    if not 1 <= number <= len(publications):
        raise CommandError(f"week {week} has {len(publications)} publication(s)")
    return number - 1


def export_week(args: argparse.Namespace) -> int:
    week, settings = args.week, Settings.from_env()
    refuse_inside_data_folder(args.out, settings, "audit export")
    if args.out.is_dir():
        raise UsageError(f"audit export: --out {args.out} is a folder; name a file")
    with build_runtime(settings) as runtime:
        record, readmodels = runtime.record, runtime.readmodels
        readmodels.catch_up()
        publications = readmodels.publications(week)
        index = _chosen(week, publications, args.publication)
        publication = publications[index]
        events = week_events(record.read_log, week, publication.position)
        write_whole(args.out, export_lines(events, publication))
        kind = " (provisional)" if publication.provisional else ""
        print(f"wrote {args.out}: {week}, publication {index + 1}{kind} at log position {publication.position}")
        return 0


def sha256_text(text: str) -> str:
    """A sha256 as 64 hex digits (either case)."""
    value = text.strip().lower()
    if len(value) != 64 or not all(c in "0123456789abcdef" for c in value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a sha256 (64 hex digits)")
    return value


def verify_file(args: argparse.Namespace) -> int:
    given = Expected(ranking_sha256=args.ranking_sha256, matrix_sha256=args.matrix_sha256,
                     events_sha256=args.events_sha256)
    if args.published is not None and anchors.given(given):
        raise UsageError("audit verify: give --published or the --*-sha256 values, not both")
    try:
        data = args.file.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {args.file}: {error.strerror}") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    try:
        checked = check_lines(lines)
        expected, source = (anchors.published(read_published(args.published), checked), args.published) \
            if args.published is not None else (given, "the values given")
    except AuditError as error:
        raise CommandError(f"{args.file}: {error}") from None
    header = checked.header
    against = (f"publication {expected.publication.number} of {header.week} in {source}"
               if expected.publication is not None else source)
    if differing := anchors.differences(checked, expected):
        raise CommandError(f"{args.file}: not as published: differs from {against}: {'; '.join(differing)}")
    print(f"{args.file}: {header.week} at log position {header.position}, {header.events} events; recomputed "
          f"from the file:\n  ranking sha256 {checked.ranking_sha256}\n  Matrix  sha256 {checked.matrix_sha256}\n"
          f"  events  sha256 {checked.events_sha256}")
    print(_conclusion(expected, against, header.week, header.position))
    if header.provisional:
        print("A provisional publication, made while the week was in progress; the week's final publication "
              "supersedes it.")
    return 0


def _conclusion(expected: Expected, against: str, week: str, position: int) -> str:
    """What was checked, in words that claim no more than that."""
    checked = anchors.given(expected)
    if not checked:
        return (f"Self-consistent only: the hash chain holds and the ranking and Matrix recompute to the sha256 in "
                f"the file's own header, which whoever wrote the file also wrote. Nothing outside the file was "
                f"checked: compare the three sha256 with the publication at log position {position} on "
                f"https://canitbuy.com/weeks/{week}, or run again with --published "
                f"https://canitbuy.com/api/weeks/{week}.json")
    one = len(checked) == 1
    same = f"{_listed(checked)} sha256 {'equals that' if one else 'equal those'} of {against}"
    if expected.publication is not None and expected.events_sha256 is None:
        return (f"As published, events not anchored: the {same}. That publication recorded no events sha256 "
                f"(publications made before it was recorded did not), so events that change neither document "
                f"(e.g. a lab receipt) are checked against nothing but the file itself.")
    if expected.publication is not None:
        return f"As published: the {same}."
    missing = [name for name in anchors.NAMES.values() if name not in checked]
    unchecked = f" Not given, so not checked: {_listed(missing)}." if missing else ""
    return f"Equal to the values given: the {_listed(checked)} sha256.{unchecked}"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


MAX_PUBLISHED_BYTES = 16 * 1024 * 1024


def read_published(source: str) -> WeekPublications:
    """The week's published values from a file or an http(s) address; any failure is one line."""
    if source.startswith(("http://", "https://")):
        data = _fetched(source)
    else:
        try:
            data = Path(source).read_bytes()
        except OSError as error:
            raise CommandError(f"cannot read {source}: {error.strerror}") from None
    try:
        record = msgspec.json.decode(data, type=WeekPublications)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise CommandError(f"{source} is not a week's JSON (/api/weeks/W.json): {error}") from None
    if record.format != WEEK_FORMAT:
        raise CommandError(f"{source} is a {record.format!r} document, not {WEEK_FORMAT!r}")
    return record


def _fetched(url: str) -> bytes:
    import http.client
    import urllib.error
    import urllib.request

    # only http(s) addresses come here (read_published), so no file: or other scheme is opened
    headers = {"Accept": "application/json", "User-Agent": "canitbuy-audit"}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            data: bytes = response.read(MAX_PUBLISHED_BYTES + 1)
    except urllib.error.HTTPError as error:
        raise CommandError(f"cannot fetch {url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise CommandError(f"cannot fetch {url}: {_reason(error.reason)}") from None
    except (OSError, http.client.HTTPException, ValueError) as error:
        raise CommandError(f"cannot fetch {url}: {_reason(error)}") from None
    if len(data) > MAX_PUBLISHED_BYTES:
        raise CommandError(f"cannot fetch {url}: the answer is larger than {MAX_PUBLISHED_BYTES} bytes")
    return data


def _reason(reason: object) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror.lower()
    return str(reason).strip().splitlines()[0] if str(reason).strip() else type(reason).__name__


def replay_week(args: argparse.Namespace) -> int:
    week, settings = args.week, Settings.from_env()
    with build_runtime(settings) as runtime:
        readmodels = runtime.readmodels
        readmodels.catch_up()
        try:
            if args.publication is not None or args.as_published:
                index = _chosen(week, readmodels.publications(week), args.publication) \
                    if args.publication is not None else None
                docs = readmodels.published_documents(week, index)
            else:
                docs = readmodels.week_documents(week)
        except (UnknownWeekError, NotPublishedError) as error:
            raise CommandError(str(error)) from None
        sys.stdout.buffer.write((docs.matrix if args.matrix else docs.ranking) + b"\n")
        return 0
