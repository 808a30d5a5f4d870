"""`canitbuy dataset export` writes each week's files whole or not at all, never into the data folder, and says a
write error in one line naming the file (docs/operations.md): run as a user types it, in its own process, against
a real store (SQLite) holding one published week.

Before, the files were written in place one after the other: a full disk left a truncated file (and the files
before it) under the release's own names, a folder standing where one file goes left the others written, and an
--out inside the data folder was written into.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from adapters.settings import Settings
from adapters.wiring import build_runtime
from domain.agent.verdicts import Verdict
from domain.courses.course import load_course
from domain.eventlog.commands import PublishWeek, ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.publishing import publish_week
from domain.week.weeks import week_of

REPO = Path(__file__).resolve().parents[2]
COURSE = load_course()
FILES = sorted(["README.md", "SHA256SUMS", *(f"{table}.{kind}" for table in
                                            ("corrections", "runs", "stations", "steps", "verdicts")
                                            for kind in ("csv", "parquet"))])
FILE_LIMIT = 32768
"""RLIMIT_FSIZE of the command in the full-disk case: no file may grow past 32 kB, which SQLite's shared-memory
index of the store needs, and which the runs of eight repeats at every station exceed as CSV (about 47 kB)."""
REPEATS = 8


def published(data: Path) -> str:
    """A store in `data` with this week's runs of one built-in agent at every station, eight times, published."""
    with build_runtime(Settings(data_dir=data)) as runtime:
        record = runtime.record
        week = week_of(record.clock())
        for repeat, code in ((r, c) for r in range(REPEATS) for c in COURSE.codes):
            [run_id] = schedule_runs(record, [ScheduleRun.on_course(
                station=code, model="baseline-robust", requested_by="test", week=week, repeat=repeat)])
            record.start_run(run_id, worker="test", browser_version="chromium-test", agent_version="test")
            verdict = Verdict(passed=True, outcome="passed", stage=COURSE.station(code).stage, step=1,
                              reason="The checkout's form opened.")
            record.finish_run(run_id, verdict, steps=1, seconds=1.0)
        publish_week(record, runtime.readmodels, PublishWeek(week=week, by="test@canitbuy.com"))
    return week


def export(data: Path, out: Path, file_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_") and k != "AI_GATEWAY_API_KEY"}
    clean.update({"CANITBUY_DATA_DIR": str(data), "PYTHONPATH": str(REPO)})

    def limit() -> None:  # a full disk, as far as this process's writes go (Python ignores SIGXFSZ)
        os.umask(0o022)
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run([sys.executable, "-m", "ops.cli", "dataset", "export", "--all", "--out", str(out)],
                          cwd=data.parent, env=clean, capture_output=True, text=True, timeout=120, preexec_fn=limit)


def one_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("canitbuy: "), line
    return line


def listing(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under `folder` (temporaries included), with a file's bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


def test_a_full_disk_leaves_no_partial_file_and_the_files_already_there_as_they_were(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "dataset"
    week = published(data)

    line = one_line(export(data, out, FILE_LIMIT), 1)
    assert line.startswith(f"canitbuy: cannot write {out / week}/") and line.endswith(": File too large")
    assert listing(out) == {}, "no file, no temporary, and no week folder it made"

    (out / week).mkdir(parents=True)
    (out / week / "runs.csv").write_bytes(b"an older release\n")
    before = listing(out)
    one_line(export(data, out, FILE_LIMIT), 1)
    assert listing(out) == before, "the files already there are as they were; nothing new beside them"

    done = export(data, out)
    assert done.returncode == 0 and f"wrote {out / week}" in done.stdout, done.stderr
    assert sorted(listing(out / week)) == FILES, "the whole release, no temporary left"
    modes = {oct((out / week / name).stat().st_mode & 0o777) for name in FILES}
    assert modes == {"0o644"}, "public files, as the umask (022) makes them, not a temporary file's 0600"


def test_something_in_the_way_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "dataset"
    week = published(data)

    out.write_bytes(b"a file\n")
    line = one_line(export(data, out), 2)
    assert line == f"canitbuy: dataset export: --out {out} is a file; name a folder", line
    out.unlink()

    out.mkdir()
    (out / week).write_bytes(b"a file\n")
    line = one_line(export(data, out), 1)
    assert line == f"canitbuy: cannot write {out / week}: a file is in its place", line
    (out / week).unlink()

    (out / week / "runs.parquet").mkdir(parents=True)
    line = one_line(export(data, out), 1)
    assert line == f"canitbuy: cannot write {out / week / 'runs.parquet'}: a folder is in its place", line
    assert listing(out) == {week: None, f"{week}/runs.parquet": None}, "no other file of the release was written"


def test_an_out_inside_the_data_folder_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    week = published(data)
    before = listing(data)
    for out in (data, data / "dataset", data / "blobs" / ".."):
        line = one_line(export(data, out), 2)
        assert "inside the data folder" in line, line
    assert listing(data) == before, "nothing in the data folder changed"

    # The data folder where a week's files would go (OUT/<week>): refused too, the store untouched.
    nested = tmp_path / "exports" / week
    (tmp_path / "exports").mkdir()
    data.rename(nested)
    line = one_line(export(nested, tmp_path / "exports"), 2)
    assert "inside the data folder" in line, line
    assert listing(nested) == before
