"""A real S3 API server (moto in server mode, on a free port) for the blob store's S3 backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from moto.server import ThreadedMotoServer

from adapters.blobs import S3BlobStore, s3_client
from adapters.settings import Settings

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
