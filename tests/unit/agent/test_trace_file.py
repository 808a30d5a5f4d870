"""Taking `trace.stacks` out of a kept trace: the other entries keep their bytes, names and order; zips the byte
copy does not read (ZIP64) are written again; what is not a zip is refused and left as it was."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from adapters.browser.trace_file import CALL_STACKS, drop_call_stacks, drop_entries

ENTRIES = {"trace.trace": b'{"type":"before"}\n' * 400, CALL_STACKS: b'{"files":["/srv/worker.py"]}',
           "trace.network": b'{"type":"resource-snapshot"}\n' * 50, "resources/a.css": b"body{}" * 30}


class Unseekable(io.RawIOBase):
    """A stream zipfile cannot seek back in: it then writes a data descriptor after each entry, as Playwright's
    zip writer (yazl) does."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[no-untyped-def,override]
        self.buffer += data
        return len(data)


def write_zip(path: Path, entries: dict[str, bytes], *, descriptors: bool = False, comment: bytes = b"") -> None:
    stream: io.RawIOBase | io.BytesIO = Unseekable() if descriptors else io.BytesIO()
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.comment = comment
        for name, content in entries.items():
            with archive.open(name, "w") as entry:
                entry.write(content)
    path.write_bytes(bytes(stream.buffer) if isinstance(stream, Unseekable) else stream.getvalue())


def raw(path: Path) -> dict[str, bytes]:
    """Each entry's compressed bytes as stored (what a byte copy keeps and a second compression would not)."""
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        out = {}
        for info in archive.infolist():
            name_length, extra_length = struct.unpack_from("<2H", data, info.header_offset + 26)
            start = info.header_offset + 30 + name_length + extra_length
            out[info.filename] = data[start:start + info.compress_size]
        return out


def contents(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None  # every entry's CRC checks
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.mark.parametrize("descriptors", [False, True], ids=["sizes-in-headers", "data-descriptors"])
def test_the_call_stacks_go_and_the_rest_keeps_its_bytes_names_and_order(tmp_path: Path, descriptors: bool) -> None:
    trace = tmp_path / "trace.zip"
    write_zip(trace, ENTRIES, descriptors=descriptors, comment=b"a comment")
    before = raw(trace)
    assert drop_call_stacks(trace) is True
    assert contents(trace) == {name: content for name, content in ENTRIES.items() if name != CALL_STACKS}
    assert list(contents(trace)) == ["trace.trace", "trace.network", "resources/a.css"]
    assert raw(trace) == {name: data for name, data in before.items() if name != CALL_STACKS}  # not compressed again
    with zipfile.ZipFile(trace) as archive:
        assert archive.comment == b"a comment"
    assert not list(tmp_path.glob("*.tmp"))


def test_a_trace_without_call_stacks_is_left_as_it_is(tmp_path: Path) -> None:
    trace = tmp_path / "trace.zip"
    write_zip(trace, {name: content for name, content in ENTRIES.items() if name != CALL_STACKS})
    before = trace.read_bytes()
    assert drop_call_stacks(trace) is False
    assert trace.read_bytes() == before


def test_several_entries_are_dropped_at_once_wherever_they_lie(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    write_zip(archive, ENTRIES)
    assert drop_entries(archive, {"trace.trace", "resources/a.css"}) == 2
    assert list(contents(archive)) == [CALL_STACKS, "trace.network"]


def test_a_zip64_archive_is_written_again_without_the_call_stacks(tmp_path: Path) -> None:
    trace = tmp_path / "trace.zip"
    many = {f"resources/{number}": b"" for number in range(0x10000)}  # more entries than a plain zip counts
    write_zip(trace, {**ENTRIES, **many})
    assert trace.read_bytes()[-22 - 20:-22][:4] == b"PK\x06\x07"  # the ZIP64 locator: the byte copy steps aside
    assert drop_call_stacks(trace) is True
    kept = contents(trace)
    assert CALL_STACKS not in kept and len(kept) == len(ENTRIES) - 1 + len(many)
    assert kept["trace.trace"] == ENTRIES["trace.trace"]


@pytest.mark.parametrize("broken", [b"", b"not a zip at all", "truncated"])
def test_what_is_not_a_readable_zip_is_refused_and_left_as_it_was(tmp_path: Path, broken: bytes | str) -> None:
    trace = tmp_path / "trace.zip"
    if broken == "truncated":  # a trace cut short, its end record gone
        write_zip(trace, ENTRIES)
        trace.write_bytes(trace.read_bytes()[:-30])
    else:
        assert isinstance(broken, bytes)
        trace.write_bytes(broken)
    before = trace.read_bytes()
    with pytest.raises(zipfile.BadZipFile):
        drop_call_stacks(trace)
    assert trace.read_bytes() == before and not list(tmp_path.glob("*.tmp"))
