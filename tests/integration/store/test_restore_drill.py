"""The restore drill (issue 15 item 6), done the way docs/operations.md tells operators: back up (pg_dump of the
event store; a copy of the blob folder, or of the bucket's objects), destroy, restore into a fresh database and a
fresh folder or bucket, rebuild the read models; `canitbuy check` passes and every published week replays to
byte-identical documents."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from blob_week import WEEK, StepClock, published_week

from adapters.blobs import open_blobs
from adapters.eventstore import open_record
from adapters.settings import Settings
from ops.cli import main
from tests.conftest import ADMIN_URL
from tests.integration.store.conftest import S3Server

pytestmark = pytest.mark.postgres


def _database(name: str) -> str:
    return f"{ADMIN_URL.rpartition('/')[0]}/{name}"


@pytest.fixture
def databases() -> Iterator[list[str]]:
    """Names of the databases a test makes (dropped after it, whatever happened)."""
    made: list[str] = []
    yield made
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        for name in made:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _create(databases: list[str]) -> str:
    name = f"canitbuy_drill_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    databases.append(name)
    return _database(name)


def _point_cli(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> None:
    monkeypatch.setenv("CANITBUY_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("CANITBUY_DATABASE_URL", str(settings.database_url))
    for name, value in (("CANITBUY_BLOB_URL", settings.blob_url), ("CANITBUY_S3_ENDPOINT", settings.s3_endpoint_url),
                        ("CANITBUY_S3_ACCESS_KEY_ID", settings.s3_access_key_id),
                        ("CANITBUY_S3_SECRET_ACCESS_KEY", settings.s3_secret_access_key)):
        if value:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)


def _published_bytes(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """The week's ranking and Matrix as published, replayed from the log by `canitbuy audit replay`."""
    capsys.readouterr()
    assert main(["audit", "replay", "--week", WEEK]) == 0
    ranking = capsys.readouterr().out
    assert main(["audit", "replay", "--week", WEEK, "--matrix"]) == 0
    return ranking, capsys.readouterr().out


def _checked(capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    code = main(["check"])
    said = capsys.readouterr()
    assert code == 0, said.err
    return said.out


def _dump(url: str, to: Path) -> None:
    subprocess.run(["pg_dump", "--format=custom", "--no-owner", f"--file={to}", f"--dbname={url}"], check=True)


def _restore(dump: Path, url: str) -> None:
    subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={url}", str(dump)], check=True)


def _drop(url: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{url.rpartition("/")[2]}" WITH (FORCE)')


def _drill(settings: Settings, restored: Settings, backup_blobs: object, restore_blobs: object, destroy_blobs: object,
           tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    record = open_record(settings, clock=StepClock())
    try:
        published_week(settings, record, open_blobs(settings))
    finally:
        record.close()
    _point_cli(monkeypatch, settings)
    before = _published_bytes(capsys)
    said_before = _checked(capsys)
    # back up
    assert settings.database_url
    _dump(settings.database_url, tmp_path / "events.dump")
    backup_blobs()  # type: ignore[operator]
    # destroy
    _drop(settings.database_url)
    destroy_blobs()  # type: ignore[operator]
    # restore into a fresh database and a fresh folder or bucket, then rebuild the read models
    assert restored.database_url
    _restore(tmp_path / "events.dump", restored.database_url)
    restore_blobs()  # type: ignore[operator]
    _point_cli(monkeypatch, restored)
    capsys.readouterr()
    assert main(["db", "rebuild"]) == 0
    said_after = _checked(capsys)
    assert said_after.split("(")[0] == said_before.split("(")[0]  # the same events and aggregates
    assert _published_bytes(capsys) == before
    assert main(["week", "show", "--week", WEEK]) == 0 and "publication 1" in capsys.readouterr().out


def test_the_drill_with_the_blob_folder(databases: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings(data_dir=tmp_path / "var", database_url=_create(databases))
    restored = Settings(data_dir=tmp_path / "restored", database_url=_create(databases))
    copy = tmp_path / "backup-blobs"
    _drill(settings, restored,
           backup_blobs=lambda: shutil.copytree(settings.data_dir / "blobs", copy),
           destroy_blobs=lambda: shutil.rmtree(settings.data_dir),
           restore_blobs=lambda: shutil.copytree(copy, restored.data_dir / "blobs"),
           tmp_path=tmp_path, monkeypatch=monkeypatch, capsys=capsys)


def copy_bucket(client: object, source: str, target: str) -> int:
    """Every object of one bucket into another (server-side copies), as docs/operations.md shows."""
    copied = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=source):  # type: ignore[attr-defined]
        for item in page.get("Contents", []):
            client.copy_object(Bucket=target, Key=item["Key"],  # type: ignore[attr-defined]
                               CopySource={"Bucket": source, "Key": item["Key"]})
            copied += 1
    return copied


def empty_and_delete(client: object, bucket: str) -> None:
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):  # type: ignore[attr-defined]
        for item in page.get("Contents", []):
            client.delete_object(Bucket=bucket, Key=item["Key"])  # type: ignore[attr-defined]
    client.delete_bucket(Bucket=bucket)  # type: ignore[attr-defined]


def test_the_drill_with_the_bucket(s3_server: S3Server, databases: list[str], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    client = s3_server.client()
    live, backup, fresh = s3_server.new_bucket(), s3_server.new_bucket(), s3_server.new_bucket()
    settings = s3_server.settings(live, data_dir=tmp_path / "var", database_url=_create(databases))
    restored = s3_server.settings(fresh, data_dir=tmp_path / "restored", database_url=_create(databases))
    copied: list[int] = []
    _drill(settings, restored,
           backup_blobs=lambda: copied.append(copy_bucket(client, live, backup)),
           destroy_blobs=lambda: empty_and_delete(client, live),
           restore_blobs=lambda: copied.append(copy_bucket(client, backup, fresh)),
           tmp_path=tmp_path, monkeypatch=monkeypatch, capsys=capsys)
    assert copied[0] == copied[1] > 60
