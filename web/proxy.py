"""Who the client is behind a TLS proxy: the proxy's X-Forwarded-For and X-Forwarded-Proto are believed only when
the request comes from one of the addresses in CANITBUY_TRUSTED_PROXIES (anyone else could write them).

The client is the right-most address in X-Forwarded-For that is not itself a trusted proxy, since each proxy
appends the address it saw: addresses further left were written by the client and prove nothing. Sign-in limits
and submission quotas count per client address, so without this every client would share the proxy's.
"""

from __future__ import annotations

import ipaddress

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ForwardedClient:
    def __init__(self, app: ASGIApp, trusted: tuple[str, ...]) -> None:
        self.app = app
        self.trusted: tuple[Network, ...] = tuple(ipaddress.ip_network(n, strict=False) for n in trusted)

    def _trusts(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] == "http" and self.trusted and client and self._trusts(client[0]):
            scope = dict(scope)
            headers = Headers(scope=scope)
            scope["client"] = (self._client(headers, client[0]), client[1])
            proto = headers.get("x-forwarded-proto", "").rpartition(",")[2].strip().lower()
            if proto in ("http", "https"):
                scope["scheme"] = proto
        await self.app(scope, receive, send)

    def _client(self, headers: Headers, peer: str) -> str:
        hops = [hop.strip() for line in headers.getlist("x-forwarded-for") for hop in line.split(",")]
        client = peer
        for hop in reversed(hops):
            try:
                client = str(ipaddress.ip_address(hop))
            except ValueError:
                break  # not an address: what is left of it is not the proxy's word
            if not self._trusts(client):
                break
        return client
