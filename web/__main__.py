"""`python -m web --host H --port P`: the public site and the staff desk as a program of their own.

`canitbuy web serve` hands its process over to this (ops never imports the site: the import contract in
pyproject.toml says so, and the process boundary keeps it). Errors are one line, as the CLI's are.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="canitbuy web serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)

    import uvicorn

    from adapters.settings import Settings, SettingsError
    from web.app import create_app
    from web.staff.session import SecretError, load_or_create_secret

    try:
        settings = Settings.from_env()
        # a short or empty secret stops the start here, in one line, rather than in the app's lifespan
        load_or_create_secret(settings.site_secret, settings.data_dir)
    except (SettingsError, SecretError) as error:
        print(f"canitbuy: {error}", file=sys.stderr)
        return 1
    print(f"canitbuy web: http://{args.host}:{args.port}/ (staff desk at /staff/)", flush=True)
    # One process: the site keeps its read models caught up from a single loop (see web/data.py).
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info",
                proxy_headers=False, server_header=False)  # the app reads the proxy's headers (web/proxy.py)
    return 0


if __name__ == "__main__":
    sys.exit(main())
