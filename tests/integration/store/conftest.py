"""Set-ups shared by the store's tests: the record on a StepClock and its read models, on the backend of the
`settings` fixture (SQLite and PostgreSQL); a real S3 API server (moto in server mode, on a free port) for the blob
store's S3 backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from moto.server import ThreadedMotoServer
from record_builders import StepClock

from adapters.blobs import S3BlobStore, s3_client
from adapters.eventstore import open_record
from adapters.readmodels import ReadModels
from adapters.settings import Settings
from domain.eventlog.record import Record


@pytest.fixture
def record(settings: Settings) -> Iterator[Record]:
    """The record on `settings`' backend, on a StepClock (one second on each time it is read)."""
    record = open_record(settings, clock=StepClock())
    yield record
    record.close()


@pytest.fixture
def readmodels(settings: Settings, record: Record) -> ReadModels:
    return ReadModels(settings, record, page_size=50)


ACCESS = {"s3_access_key_id": "canitbuy-test", "s3_secret_access_key": "canitbuy-test-secret"}


@dataclass
class S3Server:
    endpoint: str

    def client(self) -> Any:
        return s3_client(endpoint_url=self.endpoint, region=None, access_key_id=ACCESS["s3_access_key_id"],
                         secret_access_key=ACCESS["s3_secret_access_key"])

    def new_bucket(self) -> str:
        name = f"canitbuy-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def settings(self, bucket: str, **fields: Any) -> Settings:
        """Settings that put blobs in this bucket, as CANITBUY_BLOB_URL and CANITBUY_S3_* would."""
        return Settings(blob_url=f"s3://{bucket}/blobs", s3_endpoint_url=self.endpoint, **ACCESS, **fields)

    def store(self, bucket: str) -> S3BlobStore:
        return S3BlobStore(self.client(), bucket, "blobs")


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield S3Server(f"http://{host}:{port}")
    finally:
        server.stop()
