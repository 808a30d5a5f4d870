"""Fetching an agent's key directory (`/.well-known/http-message-signatures-directory`), carefully.

The lab fetches whatever origin a request names, so the fetch is bounded: https only (plain http only to
loopback, and only when the lab is started with --trust-local-directories), no redirects, one deadline for the
whole fetch (name lookup, connection and every byte: a server that trickles cannot hold it longer), at most
64 KB as sent (no compressed bodies: a small gzip body can grow a thousandfold), and a cache so a busy agent
costs one fetch every few minutes. Without the trust flag an https host must resolve to public addresses only
(no private, loopback, link-local, site-local or reserved network, nor an IPv6 form that embeds such an IPv4
address: IPv4-compatible, NAT64, 6to4), and the fetch connects to the address that was checked (TLS still
verifies the name), so a second DNS answer cannot point it elsewhere.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import socket
import time
from urllib.parse import urlsplit

import anyio
import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

WELL_KNOWN = "/.well-known/http-message-signatures-directory"
MAX_BYTES = 64 * 1024
TIMEOUT_S = 3.0
TTL_S = 300.0
MAX_CACHED = 1000
FAILURE_TTL_S = 10.0  # a failing directory is not asked again at once


class DirectoryError(Exception):
    """The directory could not be fetched or read; the request meets the gate."""


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def thumbprint(x: str) -> str:
    """RFC 7638 JWK SHA-256 thumbprint of an Ed25519 OKP key, base64url without padding."""
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).decode().rstrip("=")


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def directory_url(agent: str, trust_local: bool) -> str:
    try:
        parts = urlsplit(agent)
        parts.port  # noqa: B018 - a port that is not a number from 0 to 65535 raises here
    except ValueError as error:  # "https://[::1", "https://host:abc", "https://host:99999"
        raise DirectoryError(f"Signature-Agent is not an origin: {error}") from None
    host = (parts.hostname or "").lower()
    if not host or parts.username or parts.password:
        raise DirectoryError("Signature-Agent is not an origin")
    allowed = parts.scheme == "https" or (parts.scheme == "http" and trust_local and _is_loopback(host))
    if not allowed:
        raise DirectoryError("directory must be https (or loopback http when trusted)")
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}"


_SITE_LOCAL = ipaddress.ip_network("fec0::/10")
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
_EMBEDDING_V4 = (ipaddress.ip_network("::/96"), ipaddress.ip_network("64:ff9b::/96"))
"""IPv4-compatible addresses and well-known NAT64: the last 32 bits are an IPv4 address reached through them."""


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in network for network in _EMBEDDING_V4):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _is_public(address: str) -> bool:
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _SITE_LOCAL or ip in _LOCAL_NAT64:
            return False
        ip = _embedded_ipv4(ip) or ip
    return ip.is_global and not ip.is_multicast


async def public_address(host: str, port: int) -> str:
    """One address of `host`, after checking that every address it resolves to is on a public network."""
    try:
        answers = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise DirectoryError(f"directory host does not resolve: {error}") from error
    addresses = [str(answer[4][0]) for answer in answers]
    if not addresses or not all(_is_public(address) for address in addresses):
        raise DirectoryError("directory host resolves to a private, loopback or link-local address")
    return addresses[0]


def _keys(document: bytes) -> dict[str, Ed25519PublicKey]:
    keys: dict[str, Ed25519PublicKey] = {}
    try:
        entries = json.loads(document).get("keys", [])
        for jwk in entries if isinstance(entries, list) else []:
            if isinstance(jwk, dict) and jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
                x = str(jwk.get("x", ""))
                keys[thumbprint(x)] = Ed25519PublicKey.from_public_bytes(b64url_decode(x))
    except (ValueError, AttributeError) as error:
        raise DirectoryError("directory is not a JWKS of Ed25519 keys") from error
    return keys


class KeyDirectory:
    def __init__(self, trust_local: bool = False) -> None:
        self.trust_local = trust_local
        self._cache: dict[str, tuple[float, dict[str, Ed25519PublicKey] | None]] = {}

    async def keys(self, agent: str) -> dict[str, Ed25519PublicKey]:
        url = directory_url(agent, self.trust_local)
        cached = self._cache.get(url)
        if cached and cached[0] > time.monotonic():
            if cached[1] is None:
                raise DirectoryError("directory failed recently")
            return cached[1]
        try:
            with anyio.fail_after(TIMEOUT_S):  # one deadline for the lookup, the connection and every byte
                document = await self._fetch(url)
            keys = _keys(document)
        except TimeoutError:
            self._failed(url)
            raise DirectoryError(f"directory took longer than {TIMEOUT_S:g} s") from None
        except DirectoryError:
            self._failed(url)
            raise
        except httpx.HTTPError as error:  # the gate's header names it: say it was the directory's fetch
            self._failed(url)
            raise DirectoryError(f"directory could not be fetched: {error or type(error).__name__}") from error
        self._remember(url, keys)
        return keys

    def _failed(self, url: str) -> None:
        self._cache[url] = (time.monotonic() + FAILURE_TTL_S, None)
        if len(self._cache) > MAX_CACHED:
            self._cache.pop(next(iter(self._cache)))

    def _remember(self, url: str, keys: dict[str, Ed25519PublicKey]) -> None:
        if len(self._cache) >= MAX_CACHED:  # any origin may be named: the cache must not grow without end
            now = time.monotonic()
            self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
            if len(self._cache) >= MAX_CACHED:
                self._cache.clear()
        self._cache[url] = (time.monotonic() + TTL_S, keys)

    async def _fetch(self, url: str) -> bytes:
        headers: dict[str, str] = {"Accept": "application/json", "Accept-Encoding": "identity"}
        extensions: dict[str, str] = {}
        parts = urlsplit(url)
        if parts.scheme == "https" and not self.trust_local:
            host = parts.hostname or ""
            address = await public_address(host, parts.port or 443)
            literal = f"[{address}]" if ":" in address else address
            url = parts._replace(netloc=f"{literal}:{parts.port or 443}").geturl()
            headers["Host"], extensions["sni_hostname"] = parts.netloc, host
        client = httpx.AsyncClient(timeout=TIMEOUT_S, follow_redirects=False, trust_env=False)
        request = client.build_request("GET", url, headers=headers, extensions=extensions)
        async with client:
            response = await client.send(request, stream=True)
            try:
                return await self._body(response)
            finally:
                await response.aclose()

    async def _body(self, response: httpx.Response) -> bytes:
        if response.status_code != 200:
            raise DirectoryError(f"directory answered {response.status_code}")
        if response.headers.get("content-encoding", "identity").strip().lower() != "identity":
            raise DirectoryError("directory is compressed; we asked for it as is")
        body = b""
        async for chunk in response.aiter_raw():  # the bytes as sent, counted before anything could grow them
            body += chunk
            if len(body) > MAX_BYTES:
                raise DirectoryError("directory is larger than 64 KB")
        return body
