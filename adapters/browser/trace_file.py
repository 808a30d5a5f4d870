"""A run's Playwright trace made the run's own before it is kept: without `trace.stacks`.

Playwright's client sends the call stack of every API call on the connection to every trace open on it, and the
driver writes them all into each trace's `trace.stacks` (Playwright 1.65: `localUtils.addStackToTracingNoReply`).
One browser serves several runs at once, so a run's trace would hold the stacks of the runs beside it, possibly
private ones: the kinds of their actions (each stack's line number tells a click from a fill), and the worker's
file paths. The trace viewer reads the file only to show the source of each call, which is our harness's, not the
agent's; the rest of the trace (actions, DOM snapshots, network) is the context's own and stays as written.

The entry is taken out by copying the other entries' bytes as they are (no second compression: a course keeps
90 traces and the copy costs next to nothing); a zip that this copy does not read (ZIP64, split archives) is
written again entry by entry with `zipfile`, which reads them all.
"""

from __future__ import annotations

import os
import struct
import zipfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

CALL_STACKS = "trace.stacks"

_END = b"PK\x05\x06"
_END_FORMAT = "<4s4H2LH"  # signature, disk, disk of the directory, entries here, entries, size, offset, comment
_END_SIZE = struct.calcsize(_END_FORMAT)
_ZIP64_LOCATOR = b"PK\x06\x07"
_CENTRAL = b"PK\x01\x02"
_CENTRAL_SIZE = 46
_LOCAL = b"PK\x03\x04"


class _NotPlain(Exception):
    """The zip uses what the byte copy does not read (ZIP64, more than one disk)."""


@dataclass(frozen=True)
class _Entry:
    name: str
    record: bytes  # its central directory record, as written
    offset: int  # of its local header


def drop_call_stacks(path: Path) -> bool:
    """Take `trace.stacks` out of the trace at `path`, in place; whether it was there. A file that is not a
    readable zip raises `zipfile.BadZipFile` and is left as it was."""
    return drop_entries(path, {CALL_STACKS}) > 0


def drop_entries(path: Path, names: Collection[str]) -> int:
    """Rewrite the zip at `path` without the entries named (atomically: a new file replaces it); how many were
    dropped. The others keep their bytes, names and order."""
    data = path.read_bytes()
    try:
        entries, directory_at, comment = _directory(data)
    except _NotPlain:
        return _rewrite(path, names)
    kept = [entry for entry in entries if entry.name not in names]
    if len(kept) == len(entries):
        return 0
    # Each entry's bytes (local header, data, data descriptor) run up to the next entry's, or the directory's.
    starts = sorted({entry.offset for entry in entries})
    ends = dict(zip(starts, [*starts[1:], directory_at], strict=True))
    body = bytearray()
    moved: dict[int, int] = {}
    for entry in sorted(kept, key=lambda e: e.offset):
        moved[entry.offset] = len(body)
        body += data[entry.offset:ends[entry.offset]]
    directory = bytearray()
    for entry in kept:
        record = bytearray(entry.record)
        struct.pack_into("<L", record, 42, moved[entry.offset])
        directory += record
    end = struct.pack(_END_FORMAT, _END, 0, 0, len(kept), len(kept), len(directory), len(body), len(comment))
    _replace(path, bytes(body + directory) + end + comment)
    return len(entries) - len(kept)


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


def _rewrite(path: Path, names: Collection[str]) -> int:
    """The slow way, for what the byte copy does not read: every other entry decompressed and written again."""
    temporary = path.with_name(path.name + ".tmp")
    dropped = 0
    try:
        with zipfile.ZipFile(path) as source, zipfile.ZipFile(temporary, "w") as target:
            target.comment = source.comment
            for info in source.infolist():
                if info.filename in names:
                    dropped += 1
                    continue
                copy = zipfile.ZipInfo(info.filename, info.date_time)
                copy.compress_type, copy.external_attr, copy.comment = (info.compress_type, info.external_attr,
                                                                        info.comment)
                copy.file_size = info.file_size  # so that a large entry is written as ZIP64 from the start
                with source.open(info) as reader, target.open(copy, "w") as writer:
                    while chunk := reader.read(1 << 20):
                        writer.write(chunk)
        if dropped:
            os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return dropped


def _replace(path: Path, content: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(content)
    os.replace(temporary, path)
