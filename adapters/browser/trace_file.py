"""A run's Playwright trace made fit to publish before it is kept: the run's own, and no live signature in it.

Playwright's client sends the call stack of every API call on the connection to every trace open on it, and the
driver writes them all into each trace's `trace.stacks` (Playwright 1.65: `localUtils.addStackToTracingNoReply`).
One browser serves several runs at once, so a run's trace would hold the stacks of the runs beside it, possibly
private ones: the kinds of their actions (each stack's line number tells a click from a fill), and the worker's
file paths. The trace viewer reads the file only to show the source of each call, which is our harness's, not the
agent's; so the entry is taken out.

The agent signs each step's requests with Web Bot Auth headers set on the context (`PlaywrightSession.sign`), and
the trace records them twice: in the `setExtraHTTPHeaders` call (`trace.trace`) and in every request's headers
(`trace.network`). A signature is valid for a minute (and the lab's 30 s of clock skew) to anyone who holds it,
so a published one would let a stranger pass s13's gate as our agent and spend its rate limit. The values of the
`Signature` and `Signature-Input` headers (any case, wherever headers appear in those JSON lines: arrays of
`{name, value}`, objects, call parameters) are replaced by `REDACTED`; `Signature-Agent`, which names our public
key directory, stays, and so does every other line, byte for byte. A line that names no such header is not parsed.

The other entries keep their bytes as they are (no second compression: a course keeps 90 traces and the copy costs
next to nothing); an entry whose lines changed is compressed again alone. A zip that this copy does not read
(ZIP64, split archives) is written again entry by entry with `zipfile`, which reads them all.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import zipfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CALL_STACKS = "trace.stacks"
SIGNATURE_HEADERS = frozenset({"signature", "signature-input"})
"""The headers whose values are taken out of a kept trace (lower case; matched in any case)."""
REDACTED = "[redacted]"
"""What a kept trace holds in place of a signature header's value."""
HEADER_LINES = (".trace", ".network")
"""The entries that are JSON lines and record headers (`trace.trace`, `trace.network`, and a later chunk's)."""

_MENTIONS = re.compile(rb"signature", re.IGNORECASE)
_END = b"PK\x05\x06"
_END_FORMAT = "<4s4H2LH"  # signature, disk, disk of the directory, entries here, entries, size, offset, comment
_END_SIZE = struct.calcsize(_END_FORMAT)
_ZIP64_LOCATOR = b"PK\x06\x07"
_CENTRAL = b"PK\x01\x02"
_CENTRAL_SIZE = 46
_LOCAL = b"PK\x03\x04"

Change = Callable[[str], Callable[[bytes], bytes | None] | None]
"""Given an entry's name, what makes its new content (None for the same), or None for an entry not to read."""


class _NotPlain(Exception):
    """The zip uses what the byte copy does not read (ZIP64, more than one disk)."""


class SignatureLeft(Exception):
    """A signature the run sent is still in its trace after the redaction (somewhere the rewrite does not read):
    the trace must not be kept."""


@dataclass(frozen=True)
class _Entry:
    name: str
    record: bytes  # its central directory record, as written
    offset: int  # of its local header


def make_publishable(path: Path, signatures: Collection[str] = ()) -> None:
    """Make the trace at `path` fit to keep, in place: without `trace.stacks`, and with the signature headers'
    values redacted. `signatures` are the header values the run sent: if any of them is still found in any entry
    (a response echoing the request's headers, say), `SignatureLeft` is raised. A file that is not a readable zip
    raises `zipfile.BadZipFile` and is left as it was."""
    rewrite_entries(path, drop={CALL_STACKS}, change=_redact_entry)
    if signatures:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                content = archive.read(info)
                if any(value.encode() in content for value in signatures):
                    raise SignatureLeft(f"{info.filename} still holds a signature the run sent")


def drop_call_stacks(path: Path) -> bool:
    """Take `trace.stacks` out of the trace at `path`, in place; whether it was there. A file that is not a
    readable zip raises `zipfile.BadZipFile` and is left as it was."""
    return drop_entries(path, {CALL_STACKS}) > 0


def drop_entries(path: Path, names: Collection[str]) -> int:
    """Rewrite the zip at `path` without the entries named (atomically: a new file replaces it); how many were
    dropped. The others keep their bytes, names and order."""
    return rewrite_entries(path, drop=names)


def redact_signatures(content: bytes) -> bytes | None:
    """JSON lines with the signature headers' values replaced by `REDACTED`, or None when none holds one. Only
    the lines that held one are written again (compact, as Playwright writes them); a line that is not JSON is
    left as it is (`make_publishable` still looks for the run's own signatures in it)."""
    if not _MENTIONS.search(content):
        return None
    lines = content.split(b"\n")
    changed = False
    for number, line in enumerate(lines):
        if not _MENTIONS.search(line):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        redacted, found = _redacted(event)
        if found:
            lines[number], changed = _dumps(redacted), True
    return b"\n".join(lines) if changed else None


def _redact_entry(name: str) -> Callable[[bytes], bytes | None] | None:
    return redact_signatures if name.endswith(HEADER_LINES) else None


def _redacted(node: Any) -> tuple[Any, bool]:
    """The JSON value with every signature header's value redacted, and whether one was: a `{name, value}` pair
    naming such a header, or a key naming one (a headers object) with a string for its value."""
    if isinstance(node, list):
        items = [_redacted(item) for item in node]
        return [item for item, _ in items], any(found for _, found in items)
    if not isinstance(node, dict):
        return node, False
    named = isinstance(node.get("name"), str) and node["name"].lower() in SIGNATURE_HEADERS
    out: dict[str, Any] = {}
    found = False
    for key, value in node.items():
        if isinstance(value, str) and (key.lower() in SIGNATURE_HEADERS or named and key == "value"):
            out[key], found = REDACTED, found or value != REDACTED
        else:
            out[key], inner = _redacted(value)
            found = found or inner
    return out, found


def _dumps(event: Any) -> bytes:
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate, which JSON.stringify writes escaped: so do we
        return json.dumps(event, separators=(",", ":")).encode()


def rewrite_entries(path: Path, *, drop: Collection[str] = (), change: Change | None = None) -> int:
    """Rewrite the zip at `path` without the entries named in `drop` and with the contents `change` gives
    (atomically: a new file replaces it; not at all when nothing differs); how many entries were dropped or
    changed. The others keep their bytes, names and order."""
    data = path.read_bytes()
    try:
        entries, directory_at, comment = _directory(data)
    except _NotPlain:
        return _rewrite(path, drop, change)
    kept = [entry for entry in entries if entry.name not in drop]
    replaced = _changed(data, kept, change)
    if len(kept) == len(entries) and not replaced:
        return 0
    # Each entry's bytes (local header, data, data descriptor) run up to the next entry's, or the directory's.
    starts = sorted({entry.offset for entry in entries})
    ends = dict(zip(starts, [*starts[1:], directory_at], strict=True))
    body = bytearray()
    moved: dict[int, int] = {}
    for entry in sorted(kept, key=lambda e: e.offset):
        moved[entry.offset] = len(body)
        body += replaced[entry.name][0] if entry.name in replaced else data[entry.offset:ends[entry.offset]]
    directory = bytearray()
    for entry in kept:
        record = bytearray(replaced[entry.name][1] if entry.name in replaced else entry.record)
        struct.pack_into("<L", record, 42, moved[entry.offset])
        directory += record
    end = struct.pack(_END_FORMAT, _END, 0, 0, len(kept), len(kept), len(directory), len(body), len(comment))
    _replace(path, bytes(body + directory) + end + comment)
    return len(entries) - len(kept) + len(replaced)


def _changed(data: bytes, kept: list[_Entry], change: Change | None) -> dict[str, tuple[bytes, bytes]]:
    """Each changed entry's new local bytes (header and data) and central record, by name."""
    if change is None:
        return {}
    replaced: dict[str, tuple[bytes, bytes]] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for entry in kept:
            changing = change(entry.name)
            info = archive.getinfo(entry.name)
            content = changing(archive.read(info)) if changing else None
            if content is not None:
                replaced[entry.name] = _compressed(info, content)
    return replaced


def _compressed(info: zipfile.ZipInfo, content: bytes) -> tuple[bytes, bytes]:
    """An entry like `info` holding `content`, compressed as a zip of its own: its local bytes and its central
    record (whose offset the caller sets)."""
    single = io.BytesIO()
    with zipfile.ZipFile(single, "w") as archive:
        archive.writestr(_like(info), content)
    data = single.getvalue()
    [entry], directory_at, _ = _directory(data)  # _NotPlain for an entry past 4 GB: not a trace's lines
    return data[:directory_at], entry.record


def _like(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    copy = zipfile.ZipInfo(info.filename, info.date_time)
    copy.compress_type, copy.external_attr, copy.comment = info.compress_type, info.external_attr, info.comment
    return copy


def _end_at(data: bytes) -> int:
    """Where the end of central directory record starts (the last one: a comment may hold the signature)."""
    at = data.rfind(_END, max(0, len(data) - _END_SIZE - 0xFFFF))
    while at >= 0:
        comment = struct.unpack_from("<H", data, at + 20)[0] if at + _END_SIZE <= len(data) else -1
        if at + _END_SIZE + comment == len(data):
            return at
        at = data.rfind(_END, 0, at)
    raise zipfile.BadZipFile("not a zip file: no end of central directory")


def _directory(data: bytes) -> tuple[list[_Entry], int, bytes]:
    """The entries in the central directory's order, where the directory starts, and the archive's comment."""
    at = _end_at(data)
    _, disk, disk_of_directory, here, count, size, offset, comment_length = struct.unpack_from(_END_FORMAT, data, at)
    if at >= 20 and data[at - 20:at - 16] == _ZIP64_LOCATOR:
        raise _NotPlain
    if disk or disk_of_directory or here != count or 0xFFFF in (here, count) or 0xFFFFFFFF in (size, offset):
        raise _NotPlain
    if offset + size > at:
        raise zipfile.BadZipFile("central directory runs past its end record")
    entries: list[_Entry] = []
    cursor = offset
    for _ in range(count):
        if data[cursor:cursor + 4] != _CENTRAL:
            raise zipfile.BadZipFile(f"no central directory record at {cursor}")
        packed, unpacked = struct.unpack_from("<2L", data, cursor + 20)
        name_length, extra_length, comment = struct.unpack_from("<3H", data, cursor + 28)
        disk_start = struct.unpack_from("<H", data, cursor + 34)[0]
        local = struct.unpack_from("<L", data, cursor + 42)[0]
        if 0xFFFFFFFF in (packed, unpacked, local) or disk_start == 0xFFFF:
            raise _NotPlain
        if local >= offset or data[local:local + 4] != _LOCAL:
            raise zipfile.BadZipFile(f"no local header at {local}")
        length = _CENTRAL_SIZE + name_length + extra_length + comment
        name = data[cursor + _CENTRAL_SIZE:cursor + _CENTRAL_SIZE + name_length]
        flags = struct.unpack_from("<H", data, cursor + 8)[0]
        entries.append(_Entry(name=name.decode("utf-8" if flags & 0x800 else "cp437"),
                              record=data[cursor:cursor + length], offset=local))
        cursor += length
    if cursor != offset + size:
        raise zipfile.BadZipFile("central directory size does not match its records")
    return entries, offset, data[at + _END_SIZE:]


def _rewrite(path: Path, drop: Collection[str], change: Change | None) -> int:
    """The slow way, for what the byte copy does not read: every other entry decompressed and written again."""
    temporary = path.with_name(path.name + ".tmp")
    differs = 0
    try:
        with zipfile.ZipFile(path) as source, zipfile.ZipFile(temporary, "w") as target:
            target.comment = source.comment
            for info in source.infolist():
                if info.filename in drop:
                    differs += 1
                    continue
                copy = _like(info)
                changing = change(info.filename) if change else None
                content = changing(source.read(info)) if changing else None
                if content is not None:
                    differs += 1
                    target.writestr(copy, content)
                    continue
                copy.file_size = info.file_size  # so that a large entry is written as ZIP64 from the start
                with source.open(info) as reader, target.open(copy, "w") as writer:
                    while chunk := reader.read(1 << 20):
                        writer.write(chunk)
        if differs:
            os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return differs


def _replace(path: Path, content: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(content)
    os.replace(temporary, path)
