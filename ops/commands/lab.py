"""`canitbuy lab serve`: run the NORDLYS lab, all 18 stations on one port, routed by Host header."""

from __future__ import annotations

import argparse
from pathlib import Path

from ops.commands import Subcommands

RECEIPT_KEY_FILE = "lab-receipt.key"


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    lab = subcommands.add_parser("lab", help="the NORDLYS test store in 18 stations")
    lab_sub = lab.add_subparsers(dest="lab_command", metavar="LAB_COMMAND", required=True)
    serve = lab_sub.add_parser("serve", help="serve every station (sNN.<domain>) and the lab index (<domain>)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8700, help="port to bind (default 8700)")
    serve.add_argument(
        "--domain",
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
    serve.set_defaults(handler=serve_lab)
    return lab


def _station_names() -> dict[str, str]:
    """Display names from the course spec, so the lab index and the published course agree."""
    try:
        import json
        from pathlib import Path

        from domain import course  # noqa: F401  the ops layer may read the course; the lab itself may not

        spec = json.loads((Path(course.__file__).parent / "courses" / "2.1.json").read_text())
        return {s["code"]: s["name"] for s in spec["stations"]}
    except (ImportError, OSError, ValueError, KeyError):
        return {}


def serve_lab(args: argparse.Namespace) -> int:
    import uvicorn

    from adapters.settings import Settings
    from lab.app import create_app
    from lab.receipts import ReceiptKey, load_or_create_seed

    key_file = args.receipt_key or Settings.from_env().data_dir / RECEIPT_KEY_FILE
    seed = load_or_create_seed(key_file)
    app = create_app(args.domain, args.trust_local_directories, _station_names(), receipt_key=seed)
    print(f"canitbuy lab: receipts signed with key {ReceiptKey(seed).kid} from {key_file}")
    print(f"canitbuy lab: http://s01.{args.domain}:{args.port}/ .. s18, index at http://{args.domain}:{args.port}/")
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
