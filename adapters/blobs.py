"""Content-addressed blob stores: screenshots, element lists, model exchanges, videos.

Two backends behind one interface, chosen by CANITBUY_BLOB_URL (`blob_store`): a folder on the file system (one
machine, or a folder shared by NFS) and any S3 API (AWS, MinIO, Ceph, R2) for several machines. Blobs are named by
their sha256 under the same layout in both (`ab/cd/abcd…`), and written atomically: the folder through a temporary
file, fsync and rename; S3 in one PUT, an object appearing whole or not at all (with the sha256 sent along for
the servers that check it, as AWS and MinIO do). So a
crash never leaves a half blob under a real name, and writing the same bytes twice is a no-op. A large upload comes
in as a file (`put_file`), never as bytes in memory.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from adapters.settings import Settings

_DIGEST = re.compile(r"^[0-9a-f]{64}$")
CHUNK = 64 * 1024
"""Bytes read at a time when a blob is streamed (a video)."""


def _layout(digest: str) -> str:
    if not _DIGEST.match(digest):
        raise KeyError(f"not a sha256 digest: {digest!r}")
    return f"{digest[:2]}/{digest[2:4]}/{digest}"


class Blobs(Protocol):
    """What the site and the commands need beyond the domain's BlobStore port: sizes and byte ranges."""

    def put(self, data: bytes) -> str: ...

    def put_file(self, source: Path) -> str:
        """Move a file into the store, read in pieces (an upload); the file is gone afterwards."""
        ...

    def get(self, digest: str) -> bytes: ...

    def has(self, digest: str) -> bool: ...

    def head(self, digest: str, size: int) -> bytes: ...

    def size(self, digest: str) -> int: ...

    def chunks(self, digest: str, start: int, end: int) -> Iterator[bytes]: ...

    def digests(self) -> Iterator[str]: ...

    def describe(self) -> str: ...


class FileBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, digest: str) -> Path:
        return self.root / _layout(digest)

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if path.exists():
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def put_file(self, source: Path) -> str:
        """Move the file at `source` into the store (read in pieces, never whole) and return its sha256 digest.
        The file is gone afterwards, stored or not (the same bytes may be there already)."""
        hasher = hashlib.sha256()
        with open(source, "rb") as handle:
            while chunk := handle.read(CHUNK):
                hasher.update(chunk)
        digest = hasher.hexdigest()
        path = self._path(digest)
        if path.exists():
            Path(source).unlink(missing_ok=True)
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        os.close(fd)
        try:
            shutil.move(source, tmp)  # a rename on the same file system, else a copy
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        finally:
            Path(source).unlink(missing_ok=True)
        return digest

    def get(self, digest: str) -> bytes:
        path = self._path(digest)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise KeyError(f"no blob {digest}") from None

    def file(self, digest: str) -> Path:
        """Where the blob lies, for serving it from disk in pieces (a video) rather than reading it whole."""
        path = self._path(digest)
        if not path.is_file():
            raise KeyError(f"no blob {digest}")
        return path

    def head(self, digest: str, size: int) -> bytes:
        """The first `size` bytes of the blob (enough to tell its type)."""
        with self.file(digest).open("rb") as handle:
            return handle.read(size)

    def has(self, digest: str) -> bool:
        try:
            return self._path(digest).exists()
        except KeyError:
            return False

    def size(self, digest: str) -> int:
        return self.file(digest).stat().st_size

    def chunks(self, digest: str, start: int, end: int) -> Iterator[bytes]:
        """Bytes start..end (inclusive) of the blob, in pieces of at most CHUNK bytes."""
        with self.file(digest).open("rb") as handle:
            handle.seek(start)
            left = end - start + 1
            while left > 0:
                piece = handle.read(min(CHUNK, left))
                if not piece:
                    return
                left -= len(piece)
                yield piece

    def digests(self) -> Iterator[str]:
        """Every stored blob's name (for backups and checks)."""
        for path in sorted(self.root.glob("*/*/*")):
            if _DIGEST.match(path.name):
                yield path.name

    def describe(self) -> str:
        return f"folder {self.root}"


class S3BlobStore:
    """Blobs as objects of one bucket of any S3 API, under an optional key prefix.

    Objects are immutable once written (a name is its content's hash), so any reader may cache them forever.
    """

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self._s3, self.bucket = client, bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""

    def _key(self, digest: str) -> str:
        return self.prefix + _layout(digest)

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        if self.has(digest):
            return digest
        # A server that checks checksums (AWS, MinIO) refuses bytes that do not hash to this sha256.
        self._s3.put_object(Bucket=self.bucket, Key=self._key(digest), Body=data,
                            ChecksumSHA256=base64.b64encode(bytes.fromhex(digest)).decode())
        return digest

    def put_file(self, source: Path) -> str:
        """Upload a file in pieces (boto3's managed transfer), named by its sha256; the file is gone afterwards."""
        try:
            hasher = hashlib.sha256()
            with open(source, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    hasher.update(chunk)
            digest = hasher.hexdigest()
            if not self.has(digest):
                self._s3.upload_file(str(source), self.bucket, self._key(digest))
            return digest
        finally:
            Path(source).unlink(missing_ok=True)

    def _object(self, digest: str, **extra: str) -> Any:
        try:
            return self._s3.get_object(Bucket=self.bucket, Key=self._key(digest), **extra)
        except self._s3.exceptions.NoSuchKey:
            raise KeyError(f"no blob {digest}") from None

    def get(self, digest: str) -> bytes:
        body: bytes = self._object(digest)["Body"].read()
        return body

    def has(self, digest: str) -> bool:
        try:
            self.size(digest)
        except KeyError:
            return False
        return True

    def head(self, digest: str, size: int) -> bytes:
        """The first `size` bytes (asked of the server as a range: a video is not fetched whole)."""
        piece: bytes = self._object(digest, Range=f"bytes=0-{size - 1}")["Body"].read()
        return piece

    def size(self, digest: str) -> int:
        from botocore.exceptions import ClientError

        try:
            found = self._s3.head_object(Bucket=self.bucket, Key=self._key(digest))
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                raise KeyError(f"no blob {digest}") from None
            raise
        return int(found["ContentLength"])

    def chunks(self, digest: str, start: int, end: int) -> Iterator[bytes]:
        """Bytes start..end (inclusive): the range is passed to the server's GetObject and streamed on."""
        body = self._object(digest, Range=f"bytes={start}-{end}")["Body"]
        try:
            yield from body.iter_chunks(CHUNK)
        finally:
            body.close()

    def digests(self) -> Iterator[str]:
        pages = self._s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix)
        for page in pages:
            for item in page.get("Contents", []):
                name = item["Key"].rsplit("/", 1)[-1]
                if _DIGEST.match(name):
                    yield name

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


def s3_client(*, endpoint_url: str | None, region: str | None, access_key_id: str | None,
              secret_access_key: str | None) -> Any:
    """A boto3 S3 client for any S3 API; unset credentials fall back to boto3's own chain (an instance role)."""
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        "s3", endpoint_url=endpoint_url, region_name=region or "us-east-1",
        aws_access_key_id=access_key_id, aws_secret_access_key=secret_access_key,
        # Path-style addressing works on every S3 API (MinIO, Ceph and moto have no per-bucket host names).
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5, "mode": "standard"},
                      max_pool_connections=32),
    )


def open_blobs(settings: Settings) -> Blobs:
    """The blob store the settings choose: S3 when CANITBUY_BLOB_URL names a bucket, else the data folder."""
    bucket = settings.s3_bucket
    if bucket is None:
        return FileBlobStore(settings.data_dir / "blobs")
    client = s3_client(endpoint_url=settings.s3_endpoint_url, region=settings.s3_region,
                       access_key_id=settings.s3_access_key_id, secret_access_key=settings.s3_secret_access_key)
    return S3BlobStore(client, bucket[0], bucket[1])
