"""Builds the record (the eventsourcing application) on SQLite or PostgreSQL from the settings."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from adapters.settings import Settings
from domain.record import Clock, Record, utc_now


class StoreConfigError(ValueError):
    pass


def record_env(settings: Settings) -> dict[str, str]:
    if settings.database_url:
        return postgres_env(settings.database_url)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(Path(settings.data_dir) / "canitbuy.sqlite3"),
        "SQLITE_LOCK_TIMEOUT": "30",
    }


def postgres_env(url: str) -> dict[str, str]:
    parsed = urlparse(url)
    dbname = parsed.path.lstrip("/")
    if not dbname:
        raise StoreConfigError("CANITBUY_DATABASE_URL names no database (postgresql://host:5432/NAME)")
    query = parse_qs(parsed.query)
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": parsed.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(parsed.port or 5432),
        "POSTGRES_USER": unquote(parsed.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parsed.password or ""),
        "POSTGRES_CONNECT_TIMEOUT": "10",
        "POSTGRES_POOL_SIZE": "5",
        "POSTGRES_MAX_OVERFLOW": "10",
        "POSTGRES_PRE_PING": "y",
        "POSTGRES_LOCK_TIMEOUT": "10",
    }
    if "schema" in query:
        env["POSTGRES_SCHEMA"] = query["schema"][0]
    return env


def open_record(settings: Settings, clock: Clock = utc_now) -> Record:
    """The record, with course 2.1 released on first start."""
    record = Record(env=record_env(settings), clock=clock)
    record.ensure_course_released("2.1")
    return record
