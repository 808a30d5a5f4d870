"""`canitbuy models check`: each line-up model answers one step through the gateway before the line-up runs."""

from __future__ import annotations

import argparse
import asyncio

from ops import arguments
from ops.commands import HELP, Subcommands


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    models = subcommands.add_parser("models", help=HELP["models"])
    sub = models.add_subparsers(dest="models_command", metavar="MODELS_COMMAND", required=True)
    check = sub.add_parser("check", help="one step each through the gateway: availability, the model id it "
                                         "resolved, latency and price; exit 1 naming the models that fail (not "
                                         "available, refused by the gateway for our configuration, or an "
                                         "unusable reply)")
    check.add_argument("--model", action="append", default=None, metavar="NAME", type=arguments.lineup_model,
                       help="check only this line-up model (repeatable; default: the whole weekly line-up)")
    check.add_argument("--timeout", type=arguments.seconds(0, 600), default=60.0,
                       help="seconds for one attempt, at most 600 (default 60)")
    check.set_defaults(handler=check_models)
    return models


def check_models(args: argparse.Namespace) -> int:
    from adapters.models.check import check_lineup, report_lines
    from adapters.models.client import HttpxModelClient
    from adapters.models.lineup import WEEKLY, entrant
    from adapters.settings import Settings
    from ops.cli import CommandError

    settings = Settings.from_env()
    if not settings.model_api_key:
        raise CommandError("AI_GATEWAY_API_KEY is not set: there is no gateway to ask")
    chosen = list(WEEKLY)
    if args.model:  # each name was checked against the line-up as it was read
        chosen = [e for e in (entrant(name) for name in args.model) if e is not None]

    async def run() -> list:  # type: ignore[type-arg]
        client = HttpxModelClient(settings.model_base_url, settings.model_api_key, timeout=args.timeout,
                                  attempts=2, backoff=1.0)
        try:
            return await check_lineup(client, chosen)
        finally:
            await client.aclose()

    checks = asyncio.run(run())
    for line in report_lines(checks):
        print(line)
    refused = [c.model for c in checks if c.gateway_refused]
    down = [c.model for c in checks if not c.available and not c.gateway_refused]
    unusable = [c.model for c in checks if c.available and not c.passed]
    named = []
    if refused:
        named.append(f"{', '.join(refused)} (the gateway refused our request: our configuration, not the model)")
    if down:
        named.append(f"{', '.join(down)} (not available)")
    if unusable:
        named.append(f"{', '.join(unusable)} (unusable reply: the scheduler still runs it)")
    if named:
        raise CommandError(f"{len(refused) + len(down) + len(unusable)} of {len(checks)} models failed the check: "
                           f"{'; '.join(named)}")
    return 0
