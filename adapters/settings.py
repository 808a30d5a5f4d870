"""The one place that reads the environment.

Everything configurable is a field of `Settings`, read once by `Settings.from_env()` and passed down.
Secrets (model keys, signing keys) are read here and never written to events or logs.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from adapters.browser.media import find_video_encoder
from adapters.models.throttle import parse_limits

DEFAULT_MODEL_BASE_URL = "https://ai-gateway.vercel.sh/v1"
MIN_SECRET_BYTES = 32
"""A shorter site secret could be guessed offline from one signed cookie: refused at start."""


class SettingsError(ValueError):
    """A configuration value is malformed; the message names the variable."""


def _dollars(text: Callable[[str], str | None], name: str) -> float | None:
    raw = text(name)
    try:
        value = float(raw) if raw else None
    except ValueError:
        raise SettingsError(f"{name} must be a number of dollars, not {raw!r}") from None
    if value is not None and not value >= 0:
        raise SettingsError(f"{name} must be zero or more")
    if value is not None and not math.isfinite(value):  # inf would be shown and kept as no cap at all
        raise SettingsError(f"{name} must be a finite number of dollars, not {raw!r} (unset it for no cap)")
    return value


def check_http_url(url: str, name: str = "") -> str:
    """`url` when it is an http(s) address with a host and a port that exists; else a SettingsError naming `name`
    (the variable or field it came from, if any).

    Checked when read, so a mistyped address (`http://[::1`, port 99999) is refused in one line before anything
    is scheduled, rather than failing in every run that would use it."""
    said = f"{name} {url!r}" if name else repr(url)
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a port that is not a number from 0 to 65535
    except ValueError as error:
        raise SettingsError(f"{said} is not an address: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingsError(f"{said} must be an http:// or https:// address with a host")
    if port == 0:
        raise SettingsError(f"{said} is not an address: port 0 is not one to connect to")
    if any(c.isspace() for c in url):
        raise SettingsError(f"{said} is not an address: it holds a space")
    return url


def check_service_url(url: str | None, name: str) -> str | None:
    """`url` (a database's or Redis's) when its host and port can be read; else a SettingsError naming `name`, so
    `postgresql://[::1` or port 99999 is refused when read rather than as `Invalid IPv6 URL` in a command."""
    if url is None:
        return None
    try:
        urlsplit(url).port  # noqa: B018 - raises on a port that is not a number from 0 to 65535, or a bad [host]
    except ValueError as error:
        raise SettingsError(f"{name} is not an address: {error}") from None
    return url


def check_signing_key(key: str | None, name: str = "CANITBUY_AGENT_SIGNING_KEY") -> str | None:
    """`key` when it is a base64url Ed25519 seed (32 bytes); else a SettingsError naming where it came from."""
    if key is None:
        return None
    try:
        seed = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    except (binascii.Error, ValueError):
        raise SettingsError(f"{name} must be a base64url Ed25519 private key (32 bytes), not base64url") from None
    if len(seed) != 32:
        raise SettingsError(f"{name} must be a base64url Ed25519 private key of 32 bytes, not {len(seed)}")
    return key


def check_chromium(path: str | None) -> str | None:
    """`path` when it is an executable program (a file we may execute that begins as a binary or a script does);
    else a SettingsError naming CANITBUY_CHROMIUM, rather than a worker that says it is ready and fails each run."""
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            opening = file.read(4)
    except OSError:
        opening = b""
    if not (os.path.isfile(path) and os.access(path, os.X_OK) and opening.startswith((b"\x7fELF", b"#!"))):
        raise SettingsError(f"CANITBUY_CHROMIUM {path!r} is not an executable program")
    return path


def _url(text: Callable[[str], str | None], name: str) -> str | None:
    raw = text(name)
    return None if raw is None else check_http_url(raw, name)


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    data_dir: Path = Path("var")
    """Where the embedded database, the blob store and the agent's key live (CANITBUY_DATA_DIR)."""
    database_url: str | None = None
    """postgresql://... selects PostgreSQL; unset selects SQLite under data_dir (CANITBUY_DATABASE_URL)."""
    redis_url: str | None = None
    """redis://... makes runs go through arq workers; unset runs them in-process (CANITBUY_REDIS_URL)."""
    model_base_url: str = DEFAULT_MODEL_BASE_URL
    """The OpenAI-compatible gateway (CANITBUY_MODEL_BASE_URL)."""
    model_api_key: str | None = msgspec.field(default=None)
    """The gateway key (AI_GATEWAY_API_KEY). Never logged, never stored in events."""
    lab_domain: str = "lab.localhost"
    """Parent domain of the stations: sNN.<lab_domain> (CANITBUY_LAB_DOMAIN)."""
    lab_url: str | None = None
    """Where a running lab answers, e.g. http://127.0.0.1:8700 (CANITBUY_LAB_URL); unset starts one in-process."""
    agent_directory_url: str | None = None
    """The https origin that serves our Web Bot Auth key directory (CANITBUY_AGENT_DIRECTORY_URL)."""
    agent_signing_key: str | None = None
    """Base64url Ed25519 private key seed (CANITBUY_AGENT_SIGNING_KEY); unset: made once in data_dir."""
    chromium_path: str | None = None
    """Chromium binary (CANITBUY_CHROMIUM); unset: Debian's build when present, else Playwright's own."""
    concurrency: int = 4
    """How many runs the in-process pool executes at once (CANITBUY_CONCURRENCY)."""
    site_secret: str | None = None
    """Secret for staff session cookies and CSRF tokens (CANITBUY_SITE_SECRET), at least 32 bytes."""
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or networks of the TLS proxies in front of the site (CANITBUY_TRUSTED_PROXIES, comma-separated):
    only a request from one of them has its X-Forwarded-For (the client) and X-Forwarded-Proto (https) believed."""
    provider_concurrency: dict[str, int] = msgspec.field(default_factory=dict)
    """Model calls at once per provider in each worker (CANITBUY_PROVIDER_CONCURRENCY, e.g. "anthropic=2,*=4");
    unset: 4 for every provider."""
    weekly_cap_usd: float | None = None
    """The weekly spending cap on models in US dollars (CANITBUY_WEEKLY_CAP_USD): once the week's runs have cost
    this much, no further model run of the week is started; unset: no cap."""
    flagship_cap_usd: float | None = None
    """The flagship line-up's own cap for a flagship week (CANITBUY_FLAGSHIP_CAP_USD); unset: no cap."""
    public_url: str | None = None
    """The site's public https base, e.g. https://canitbuy.com (CANITBUY_PUBLIC_URL): evidence addresses in
    ARC exports are made under it; unset leaves them out."""
    blob_url: str | None = None
    """Where blobs live (CANITBUY_BLOB_URL): unset, the folder data_dir/blobs; s3://bucket[/prefix], a bucket of
    any S3 API, for several machines."""
    s3_endpoint_url: str | None = None
    """The S3 API's address for MinIO, Ceph, R2 and the like (CANITBUY_S3_ENDPOINT); unset: AWS."""
    s3_region: str | None = None
    """The bucket's region (CANITBUY_S3_REGION); unset: us-east-1."""
    s3_access_key_id: str | None = None
    """CANITBUY_S3_ACCESS_KEY_ID; unset with the secret too: boto3's own chain (an instance or pod role)."""
    s3_secret_access_key: str | None = None
    """CANITBUY_S3_SECRET_ACCESS_KEY. Never logged, never stored in events."""
    traces: bool = True
    """Whether every browser run keeps a Playwright trace (trace.zip) and a video in the blob store
    (CANITBUY_TRACES=on|off); on unless turned off."""
    video_encoder: str | None = msgspec.field(default_factory=find_video_encoder)
    """The ffmpeg that makes each browser run's video from its screens: ffmpeg on the PATH. None: runs keep
    their trace alone (the worker says why, once)."""

    @property
    def backend(self) -> str:
        return "postgres" if self.database_url else "sqlite"

    @property
    def s3_bucket(self) -> tuple[str, str] | None:
        """(bucket, key prefix) when blobs live on S3, else None (the folder)."""
        if not self.blob_url:
            return None
        bucket, _, prefix = self.blob_url.removeprefix("s3://").partition("/")
        return bucket, prefix

    def __repr__(self) -> str:  # keep secrets out of logs and tracebacks
        shown = {f: getattr(self, f) for f in self.__struct_fields__}
        for secret in ("model_api_key", "agent_signing_key", "site_secret", "s3_secret_access_key"):
            if shown[secret]:
                shown[secret] = "***"
        if shown["database_url"]:
            shown["database_url"] = _without_password(str(shown["database_url"]))
        return "Settings(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"

    __str__ = __repr__

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env

        def text(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        database_url = text("CANITBUY_DATABASE_URL")
        if database_url and not database_url.startswith(("postgresql://", "postgres://")):
            raise SettingsError("CANITBUY_DATABASE_URL must start with postgresql:// (or be unset for SQLite)")
        check_service_url(database_url, "CANITBUY_DATABASE_URL")
        redis_url = text("CANITBUY_REDIS_URL")
        if redis_url and not redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise SettingsError("CANITBUY_REDIS_URL must start with redis:// (or be unset for in-process runs)")
        check_service_url(redis_url, "CANITBUY_REDIS_URL")
        concurrency_text = text("CANITBUY_CONCURRENCY") or "4"
        if not (concurrency_text.isascii() and concurrency_text.isdigit()):
            raise SettingsError(f"CANITBUY_CONCURRENCY must be a whole number, not {concurrency_text!r}")
        concurrency = int(concurrency_text)
        if not 1 <= concurrency <= 64:
            raise SettingsError("CANITBUY_CONCURRENCY must be between 1 and 64")
        cap = _dollars(text, "CANITBUY_WEEKLY_CAP_USD")
        flagship_cap = _dollars(text, "CANITBUY_FLAGSHIP_CAP_USD")
        try:
            provider_concurrency = parse_limits(text("CANITBUY_PROVIDER_CONCURRENCY") or "")
        except ValueError as error:
            raise SettingsError(f"CANITBUY_PROVIDER_CONCURRENCY: {error}") from None
        blob_url = text("CANITBUY_BLOB_URL")
        if blob_url and not re.fullmatch(r"s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/[^\s]*)?", blob_url):
            raise SettingsError(
                "CANITBUY_BLOB_URL must be s3://bucket or s3://bucket/prefix (or be unset for the "
                "folder under CANITBUY_DATA_DIR)"
            )
        traces = _switch(text("CANITBUY_TRACES"), "CANITBUY_TRACES", default=True)
        site_secret = text("CANITBUY_SITE_SECRET")
        if site_secret is not None and len(site_secret.encode()) < MIN_SECRET_BYTES:
            raise SettingsError(f"CANITBUY_SITE_SECRET must be at least {MIN_SECRET_BYTES} bytes long")
        return cls(
            data_dir=Path(text("CANITBUY_DATA_DIR") or "var"),
            database_url=database_url,
            redis_url=redis_url,
            model_base_url=_url(text, "CANITBUY_MODEL_BASE_URL") or DEFAULT_MODEL_BASE_URL,
            model_api_key=text("AI_GATEWAY_API_KEY"),
            lab_domain=text("CANITBUY_LAB_DOMAIN") or "lab.localhost",
            lab_url=_url(text, "CANITBUY_LAB_URL"),
            agent_directory_url=_url(text, "CANITBUY_AGENT_DIRECTORY_URL"),
            agent_signing_key=check_signing_key(text("CANITBUY_AGENT_SIGNING_KEY")),
            chromium_path=check_chromium(text("CANITBUY_CHROMIUM")),
            concurrency=concurrency,
            site_secret=site_secret,
            trusted_proxies=proxy_networks(text("CANITBUY_TRUSTED_PROXIES") or ""),
            public_url=_url(text, "CANITBUY_PUBLIC_URL"),
            weekly_cap_usd=cap,
            flagship_cap_usd=flagship_cap,
            provider_concurrency=provider_concurrency,
            blob_url=blob_url,
            s3_endpoint_url=text("CANITBUY_S3_ENDPOINT"),
            s3_region=text("CANITBUY_S3_REGION"),
            s3_access_key_id=text("CANITBUY_S3_ACCESS_KEY_ID"),
            s3_secret_access_key=text("CANITBUY_S3_SECRET_ACCESS_KEY"),
            traces=traces,
            video_encoder=find_video_encoder(text("PATH")),
        )


_ON, _OFF = ("on", "true", "yes", "1"), ("off", "false", "no", "0")


def _switch(raw: str | None, name: str, *, default: bool) -> bool:
    if raw is None:
        return default
    if raw.lower() in _ON:
        return True
    if raw.lower() in _OFF:
        return False
    raise SettingsError(f"{name} must be on or off, not {raw!r}")


def proxy_networks(text: str) -> tuple[str, ...]:
    """The comma-separated addresses or networks, each checked and written as a network."""
    networks = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise SettingsError(f"CANITBUY_TRUSTED_PROXIES: {item!r} is not an address or a network") from None
    return tuple(networks)


def _without_password(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{host}"
