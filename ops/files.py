"""Files the commands write for the user (`audit export`, `dataset export`): named on the command line, never in
the data folder, and written whole or not at all, each failure one line naming the file (docs/operations.md)."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from adapters.settings import Settings
from ops.cli import CommandError, UsageError


def file_path(text: str) -> Path:
    """A file named on the command line; an empty name is a usage error (Path("") would be the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the path is empty")
    return Path(text)


def refuse_inside_data_folder(out: Path, settings: Settings, command: str) -> None:
    """A file written into the data folder could replace the store's own database (or a blob, or a key)."""
    data_dir = Path(settings.data_dir).resolve()
    target = out.resolve()
    if target == data_dir or data_dir in target.parents:
        raise UsageError(f"{command}: --out {out} is inside the data folder {data_dir} (the store's own files); "
                         "write it elsewhere")


def cannot_write(out: Path, error: OSError) -> CommandError:
    return CommandError(f"cannot write {out}: {error.strerror or error}")


def _remove(temporary: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def _mode(out: Path) -> int:
    """The permissions `out` is to have: those of the file it replaces, else what the umask leaves of rw-rw-rw-, as
    open() would have made it (a temporary file is made rw------- alone)."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(out.stat().st_mode)
    umask = os.umask(0o077)
    os.umask(umask)
    return 0o666 & ~umask


def _staged(out: Path, chunks: Iterable[bytes]) -> str:
    """`chunks` written to a new temporary file beside `out` and synced to disk; its name. On any failure the
    temporary is removed again, and an OSError is one line naming `out`."""
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    except OSError as error:
        raise cannot_write(out, error) from None
    try:
        os.fchmod(handle, _mode(out))
        with os.fdopen(handle, "wb") as file:
            for chunk in chunks:
                file.write(chunk)
            file.flush()
            os.fsync(file.fileno())
    except OSError as error:
        _remove(temporary)
        raise cannot_write(out, error) from None
    except BaseException:
        _remove(temporary)
        raise
    return temporary


def write_whole(out: Path, lines: Iterable[bytes]) -> None:
    """Write `lines` to a temporary file beside `out`, then rename it over `out`: a failure part-way leaves `out`
    as it was, and the error is one line naming the file. A device or pipe (e.g. /dev/stdout) is written as it is:
    it cannot be renamed over, and it keeps no partial file."""
    if out.exists() and not out.is_file():
        try:
            with out.open("wb") as file:
                for line in lines:
                    file.write(line + b"\n")
        except OSError as error:
            raise cannot_write(out, error) from None
        return
    temporary = _staged(out, (line + b"\n" for line in lines))
    try:
        os.replace(temporary, out)
    except OSError as error:
        _remove(temporary)
        raise cannot_write(out, error) from None


def write_all_whole(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write every file whole, or change none of them: each is first written to a temporary file beside its name
    (as write_whole does), and only once all of them are on disk are they renamed into place. A failure while
    writing (a full disk, a folder that may not be written) leaves every file as it was and removes the
    temporaries; a folder standing where a file goes is refused before anything is written. The error is one line
    naming the file."""
    for out, _ in files:
        if out.is_dir():
            raise CommandError(f"cannot write {out}: a folder is in its place")
    staged: list[tuple[str, Path]] = []
    try:
        for out, data in files:
            staged.append((_staged(out, [data]), out))
        while staged:
            temporary, out = staged[0]
            try:
                os.replace(temporary, out)
            except OSError as error:
                raise cannot_write(out, error) from None
            staged.pop(0)
    finally:
        for temporary, _ in staged:
            _remove(temporary)
