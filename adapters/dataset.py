"""The open dataset's files, written with Apache Arrow: Parquet and CSV per table, the card and SHA256SUMS.

The bytes depend on the rows alone: a fixed schema (with each column's meaning as field metadata), no time or
host in the metadata, one compression (zstd, level 9), one row group per 100,000 rows, statistics on, and the
writer's own name (the pyarrow version) the only outside input. Re-exporting a release with the same pyarrow gives
the same bytes, which SHA256SUMS lets anyone check.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from domain.projections.dataset import WeekDataset
from domain.projections.dataset_card import FILES, card
from domain.projections.dataset_tables import Column, Row, tables

_TYPES = {
    "string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}
ROW_GROUP = 100_000
MEDIA_TYPES = {".parquet": "application/vnd.apache.parquet", ".csv": "text/csv; charset=utf-8",
               ".md": "text/markdown; charset=utf-8", "": "text/plain; charset=utf-8"}
CARD = "README.md"
SUMS = "SHA256SUMS"


class DatasetFile(msgspec.Struct, frozen=True):
    name: str
    data: bytes
    sha256: str

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[Path(self.name).suffix]


def schema(columns: Sequence[Column]) -> pa.Schema:
    return pa.schema([
        pa.field(c.name, _TYPES[c.type], nullable=c.nullable, metadata={"description": c.doc})
        for c in columns
    ])


def table(columns: Sequence[Column], rows: Sequence[Row]) -> pa.Table:
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    fields = schema(columns)
    return pa.Table.from_arrays([pa.array(v, type=f.type) for v, f in zip(values, fields, strict=True)],
                                schema=fields)


def parquet_bytes(data: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(
        data, sink, compression="zstd", compression_level=9, row_group_size=ROW_GROUP, use_dictionary=True,
        write_statistics=True, version="2.6", data_page_version="1.0", store_schema=True,
    )
    return sink.getvalue()


def csv_bytes(data: pa.Table) -> bytes:
    sink = io.BytesIO()
    pacsv.write_csv(data, sink, pacsv.WriteOptions(include_header=True, delimiter=",", quoting_style="needed"))
    return sink.getvalue()


def _file(name: str, data: bytes) -> DatasetFile:
    return DatasetFile(name, data, hashlib.sha256(data).hexdigest())


def dataset_files(dataset: WeekDataset) -> list[DatasetFile]:
    """Every file of the release, SHA256SUMS last; names sorted within it (as `sha256sum` lists them)."""
    files, columns = [], tables(dataset.count_by, dataset.dataset_format)
    for name in FILES:
        data = table(columns[name], dataset.tables[name])
        files += [_file(f"{name}.parquet", parquet_bytes(data)), _file(f"{name}.csv", csv_bytes(data))]
    files.append(_file(CARD, card(dataset).encode()))
    files.sort(key=lambda f: f.name)
    sums = "".join(f"{f.sha256}  {f.name}\n" for f in files)
    return [*files, _file(SUMS, sums.encode())]
