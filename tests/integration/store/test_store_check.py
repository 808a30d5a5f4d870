"""`canitbuy check` on a real PostgreSQL event store and both blob backends (issue 15 item 5): a whole store
passes; each kind of damage is named, first problem first, on one line with exit 1."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from blob_week import WEEK, StepClock, published_week, write_week_with_blobs

from adapters.blobs import FileBlobStore, open_blobs
from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from adapters.settings import Settings
from domain.eventlog.commands import PublishWeek, SetRunOutcome
from domain.eventlog.handlers import issue_correction
from domain.eventlog.store_check import check_store
from domain.week.publishing import publish_week
from ops.cli import main
from tests.integration.store.conftest import S3Server

pytestmark = pytest.mark.postgres


@pytest.fixture(params=["folder", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path, postgres_url: str,
          monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A published week on PostgreSQL with its blobs in the folder or a bucket; the CLI pointed at it."""
    if request.param == "folder":
        settings = Settings(data_dir=tmp_path / "var", database_url=postgres_url)
    else:
        s3: S3Server = request.getfixturevalue("s3_server")
        settings = s3.settings(s3.new_bucket(), data_dir=tmp_path / "var", database_url=postgres_url)
        monkeypatch.setenv("CANITBUY_BLOB_URL", str(settings.blob_url))
        monkeypatch.setenv("CANITBUY_S3_ENDPOINT", str(settings.s3_endpoint_url))
        monkeypatch.setenv("CANITBUY_S3_ACCESS_KEY_ID", str(settings.s3_access_key_id))
        monkeypatch.setenv("CANITBUY_S3_SECRET_ACCESS_KEY", str(settings.s3_secret_access_key))
    monkeypatch.setenv("CANITBUY_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("CANITBUY_DATABASE_URL", postgres_url)
    record = open_record(settings, clock=StepClock())
    try:
        published_week(settings, record, open_blobs(settings))
    finally:
        record.close()
    return settings


def _check(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["check"])
    out = capsys.readouterr()
    return code, (out.out + out.err).strip()


def test_a_whole_store_passes(store: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    code, said = _check(capsys)
    assert code == 0, said
    assert said.startswith("ok: ") and "1 publications recompute" in said and "events/s" in said
    record, blobs = open_record(store), open_blobs(store)
    try:
        report = check_store(record.read_log, blobs)
    finally:
        record.close()
    assert store.database_url
    with psycopg.connect(store.database_url) as conn:
        stored = conn.execute("SELECT count(*) FROM canitbuy_events").fetchone()
    assert stored is not None and report.events == stored[0]
    assert report.blobs == len(list(blobs.digests())) > 60 and report.publications == 1


def _events(url: str, sql: str, *params: object) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql, params)


def _first_step_event(url: str) -> tuple[str, int]:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT originator_id::text, originator_version FROM canitbuy_events "
                           "WHERE topic LIKE %s ORDER BY notification_id LIMIT 1", ("%StepRecorded",)).fetchone()
    assert row is not None
    return row[0], row[1]


def test_a_lost_event_is_named(store: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert store.database_url
    aggregate, version = _first_step_event(store.database_url)
    _events(store.database_url, "DELETE FROM canitbuy_events WHERE originator_id = %s AND originator_version = %s",
            aggregate, version)
    code, said = _check(capsys)
    assert code == 1 and said.count("\n") == 0
    assert f"version {version + 1} of aggregate {aggregate}, whose last version was {version - 1}" in said


def test_an_undecodable_event_is_named(store: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert store.database_url
    aggregate, version = _first_step_event(store.database_url)
    _events(store.database_url, "UPDATE canitbuy_events SET state = %s WHERE originator_id = %s AND "
            "originator_version = %s", b'{"step": 1}', aggregate, version)
    code, said = _check(capsys)
    assert code == 1 and "cannot be decoded" in said and said.count("\n") == 0


def test_a_missing_or_damaged_blob_is_named(store: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    blobs = open_blobs(store)
    first = next(iter(sorted(blobs.digests())))
    if isinstance(blobs, FileBlobStore):
        blobs.file(first).write_bytes(b"damaged")
    else:
        blobs._s3.put_object(Bucket=blobs.bucket, Key=blobs._key(first), Body=b"damaged")
    code, said = _check(capsys)
    assert code == 1 and f"blob {first} named at position" in said and "is damaged" in said
    if isinstance(blobs, FileBlobStore):
        blobs.file(first).unlink()
    else:
        blobs._s3.delete_object(Bucket=blobs.bucket, Key=blobs._key(first))
    code, said = _check(capsys)
    assert code == 1 and f"blob {first} named at position" in said and "missing from the blob store" in said
    assert main(["check", "--no-blobs"]) == 0


def test_a_rewritten_result_fails_its_publication(store: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert store.database_url
    with psycopg.connect(store.database_url, autocommit=True) as conn:
        row = conn.execute("SELECT notification_id, state FROM canitbuy_events WHERE topic LIKE %s AND "
                           "convert_from(state, 'UTF8') LIKE %s ORDER BY notification_id LIMIT 1",
                           ("%Finished", '%"passed":false%')).fetchone()
        assert row is not None
        conn.execute("UPDATE canitbuy_events SET state = %s WHERE notification_id = %s",
                     (bytes(row[1]).replace(b'"passed":false', b'"passed":true'), row[0]))
    code, said = _check(capsys)
    assert code == 1 and "does not give the bytes published for 2026-W48" in said


def test_every_publication_of_several_weeks_recomputes_in_one_pass(postgres_url: str, tmp_path: Path) -> None:
    # W48 published, corrected, published again; W49 published while in progress. Each publication must be
    # recomputed at its own position: the first one's bytes differ from what the log says after the correction.
    settings = Settings(data_dir=tmp_path / "var", database_url=postgres_url)
    record, blobs = open_record(settings, clock=StepClock()), open_blobs(settings)
    try:
        runs = write_week_with_blobs(record, blobs)
        readmodels = ReadModels(settings, record)
        write_week_with_blobs(record, blobs, week="2026-W49")
        first = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
        issue_correction(record, readmodels, SetRunOutcome(run_id=runs[5].id, outcome="passed", reason="judge bug",
                                                           public_text="alpha passed.", by="staff"))
        second = publish_week(record, readmodels, PublishWeek(week=WEEK, by="lead"))
        third = publish_week(record, readmodels, PublishWeek(week="2026-W49", by="lead"))
        report = check_store(record.read_log, blobs)
    finally:
        record.close()
    assert first.ranking_sha256 != second.ranking_sha256 and third.provisional
    assert report.publications == 3
