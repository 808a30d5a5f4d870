"""`canitbuy lab serve`: run the NORDLYS lab, all 18 stations on one port, routed by Host header."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from adapters.listening import address, data_dir_problem, listen, reason
from ops import arguments
from ops.cli import CommandError
from ops.commands import HELP, Subcommands

if TYPE_CHECKING:
    from adapters.settings import Settings
    from lab.ratelimit import LabLimits

RECEIPT_KEY_FILE = "lab-receipt.key"
REDIS_SECONDS = 5
"""How long Redis may take to answer at start."""


DNS_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"


def dns_name(text: str) -> str:
    """A DNS name (labels of letters, digits and inner hyphens, dot-separated): the stations are sNN.<it>."""
    import re

    name = text.strip().lower().rstrip(".")
    if len(name) > 253 - 4 or not re.fullmatch(rf"{DNS_LABEL}(\.{DNS_LABEL})*", name):
        raise argparse.ArgumentTypeError(f"{text!r} is not a DNS name (e.g. lab.localhost)")
    return name


def network(text: str) -> str:
    """An IP address or network, as given."""
    import ipaddress

    try:
        ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an address or network") from None
    return text.strip()


def redis_url(text: str) -> str:
    """A redis://, rediss:// or unix:// address whose host and port can be read."""
    from adapters.settings import SettingsError, check_service_url

    url = text.strip()
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise argparse.ArgumentTypeError(f"{text!r} must start with redis://")
    try:
        return check_service_url(url, repr(text)) or url
    except SettingsError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    lab = subcommands.add_parser("lab", help=HELP["lab"])
    lab_sub = lab.add_subparsers(dest="lab_command", metavar="LAB_COMMAND", required=True)
    serve = lab_sub.add_parser("serve", help="serve every station (sNN.<domain>) and the lab index (<domain>)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=arguments.port, default=8700, help="port to bind (default 8700)")
    serve.add_argument(
        "--domain",
        type=dns_name,
        default="lab.localhost",
        help="parent domain of the stations (default lab.localhost; production lab.canitbuy.com)",
    )
    serve.add_argument(
        "--trust-local-directories",
        action="store_true",
        help="s13: allow Web Bot Auth key directories over plain http on loopback (tests only)",
    )
    serve.add_argument(
        "--receipt-key",
        metavar="FILE",
        type=Path,
        default=None,
        help="the Ed25519 seed that signs checkout receipts, base64url in FILE; made (mode 0600) if missing, so "
        "receipts stay verifiable across restarts (default: lab-receipt.key in CANITBUY_DATA_DIR, i.e. var/)",
    )
    serve.add_argument(
        "--own-key-id",
        metavar="KEYID",
        action="append",
        default=None,
        help="a Web Bot Auth keyid (RFC 7638 thumbprint) of our own agent, with a budget apart from the course's "
        "one request a second (repeat for several; default: the agent key in CANITBUY_AGENT_SIGNING_KEY or the "
        "data dir, when there is one)",
    )
    serve.add_argument(
        "--own-network",
        metavar="NETWORK",
        type=network,
        action="append",
        default=[],
        help="an address or network of our own workers, whose unsigned requests (the reading station's fetcher) "
        "share our agent's budget (repeat)",
    )
    serve.add_argument(
        "--trusted-proxy",
        metavar="NETWORK",
        type=network,
        action="append",
        default=[],
        help="an address or network of the lab's TLS proxy, whose X-Forwarded-For names the client (repeat)",
    )
    serve.add_argument(
        "--redis-url",
        type=redis_url,
        default=None,
        help="keep the request budgets in Redis, shared by every lab process (default: CANITBUY_REDIS_URL; "
        "unset: in this process's memory)",
    )
    serve.add_argument(
        "--no-rate-limit", action="store_true", help="serve without the per-client limit (load tests only)"
    )
    serve.set_defaults(handler=serve_lab)
    return lab


def _station_names() -> dict[str, str]:
    """Display names from the course spec, so the lab index and the published course agree."""
    try:
        import json
        from pathlib import Path

        from domain.courses import course  # noqa: F401  the ops layer may read the course; the lab itself may not

        spec = json.loads((Path(course.__file__).parent / "courses" / "2.1.json").read_text())
        return {s["code"]: s["name"] for s in spec["stations"]}
    except (ImportError, OSError, ValueError, KeyError):
        return {}


def _own_keyids(args: argparse.Namespace, settings: Settings) -> frozenset[str]:
    """The keyids named, else our agent's when its key is configured or kept here (never made by the lab)."""
    if args.own_key_id:
        return frozenset(args.own_key_id)
    from adapters.botauth import KEY_FILE, keyid_of, load_or_create_key

    if settings.agent_signing_key or (settings.data_dir / KEY_FILE).exists():
        return frozenset({keyid_of(load_or_create_key(settings.agent_signing_key, settings.data_dir))})
    return frozenset()


def _limits(args: argparse.Namespace, settings: Settings) -> LabLimits | None:
    import ipaddress

    from lab.ratelimit import LabLimits

    if args.no_rate_limit:
        return None
    for option, named in (("--trusted-proxy", args.trusted_proxy), ("--own-network", args.own_network)):
        for network in named:
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise CommandError(f"{option} {network!r} is not an address or network") from None
    redis_url = args.redis_url or settings.redis_url
    if redis_url and not redis_url.startswith(("redis://", "rediss://", "unix://")):
        raise CommandError("--redis-url must start with redis://")
    return LabLimits(
        own_keyids=_own_keyids(args, settings),
        own_networks=tuple(args.own_network),
        trusted_proxies=tuple(args.trusted_proxy),
        redis_url=redis_url,
    )


def _reach_redis(url: str) -> None:
    """Every request asks Redis for its client's budget, so a lab that cannot reach the Redis it was given would
    answer 500 to every request: it does not start. Falling back to this process's memory is not done either:
    with several lab processes behind one name, each client's budget would silently be multiplied by them."""
    from redis import Redis
    from redis.exceptions import RedisError
    from redis.exceptions import TimeoutError as RedisTimeout

    parts = urlsplit(url)
    try:
        where = parts.path if parts.scheme == "unix" else address(parts.hostname or "localhost", parts.port or 6379)
    except ValueError:  # a port that is not one: as typed, without the credentials
        where = parts.netloc.rpartition("@")[2]
    client = Redis.from_url(url, socket_connect_timeout=REDIS_SECONDS, socket_timeout=REDIS_SECONDS)
    try:
        client.ping()
    except (RedisError, OSError) as error:
        cause = error.__cause__ or error.__context__
        if isinstance(error, RedisTimeout | TimeoutError) or isinstance(cause, TimeoutError):
            why = f"no answer within {REDIS_SECONDS} s"
        elif isinstance(cause, OSError):
            why = reason(cause)
        else:
            why = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise CommandError(
            f"lab serve: cannot reach Redis at {where}, where the request budgets are kept "
            f"(--redis-url, else CANITBUY_REDIS_URL): {why}"
        ) from None
    finally:
        client.close()


def serve_lab(args: argparse.Namespace) -> int:
    import uvicorn

    from adapters.settings import Settings
    from lab.app import create_app
    from lab.receipts import ReceiptKey, load_or_create_seed

    settings = Settings.from_env()
    problem = data_dir_problem(settings.data_dir)
    if problem:
        raise CommandError(f"lab serve: {problem}")
    key_file = args.receipt_key or settings.data_dir / RECEIPT_KEY_FILE
    try:
        seed = load_or_create_seed(key_file)
    except (UnicodeDecodeError, ValueError) as error:  # binary, or not base64url: the file named, not the codec
        why = "it is binary" if isinstance(error, UnicodeDecodeError) else "it does not"
        raise CommandError(
            f"lab serve: the receipt key {key_file} (--receipt-key) must hold a base64url 32-byte Ed25519 seed: {why}"
        ) from None
    limits = _limits(args, settings)
    if limits is not None and limits.redis_url:
        _reach_redis(limits.redis_url)
    app = create_app(args.domain, args.trust_local_directories, _station_names(), receipt_key=seed, limits=limits)
    try:  # bound here, so a busy port or a host not this machine's is one line (uvicorn logs it and exits 3)
        listener = listen(args.host, args.port)
    except (OSError, OverflowError) as error:
        raise CommandError(f"lab serve: cannot listen on {address(args.host, args.port)}: {reason(error)}") from None
    print(f"canitbuy lab: receipts signed with key {ReceiptKey(seed).kid} from {key_file}")
    if limits is None:
        print("canitbuy lab: no per-client limit (--no-rate-limit)")
    else:
        where = "Redis" if limits.redis_url else "this process's memory"
        print(
            f"canitbuy lab: {limits.public.rate:g} request/s a client (burst {limits.public.burst}), in {where}; "
            f"own agent keys {', '.join(sorted(limits.own_keyids)) or 'none'}"
        )
    print(f"canitbuy lab: http://s01.{args.domain}:{args.port}/ .. s18, index at http://{args.domain}:{args.port}/")
    # uvicorn would believe X-Forwarded-For from 127.0.0.1 by default; the lab's --trusted-proxy decides alone.
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="info", proxy_headers=False)
    # Ctrl-C: uvicorn stops gracefully, then raises the SIGINT it caught again once it is done; that is the stop.
    with listener, contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[listener])
    return 0
