"""`canitbuy staff add EMAIL`: make (or replace) a staff desk account. The password is prompted for, or read from
standard input with --password-stdin; it is never echoed, logged or stored anywhere but as an argon2id hash.
"""

from __future__ import annotations

import argparse
import getpass
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    staff = subparsers.add_parser("staff", help="staff desk accounts")
    sub = staff.add_subparsers(dest="staff_command", metavar="STAFF_COMMAND", required=True)
    add = sub.add_parser("add", help="make a staff desk account")
    add.add_argument("email")
    add.add_argument("--role", choices=["staff", "auditor"], default="staff",
                     help="staff changes the record; auditor reads only (default staff)")
    add.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    add.add_argument("--replace", action="store_true", help="set a new password (and role) for an existing account")
    add.set_defaults(handler=add_account)


def _password(from_stdin: bool) -> str:
    from ops.cli import CommandError

    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Again: ") != first:
        raise CommandError("the two passwords differ")
    return first


def add_account(args: argparse.Namespace) -> int:
    from adapters.settings import Settings, SettingsError
    from adapters.sqldb import SqlDb
    from ops.cli import CommandError
    from web.staff.accounts import AccountError, StaffAccounts

    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise CommandError(str(error)) from None
    password = _password(args.password_stdin)
    db = SqlDb(settings)
    db.migrate()
    try:
        account = StaffAccounts(db).add(args.email, password, args.role, replace=args.replace)
    except AccountError as error:
        raise CommandError(str(error)) from None
    print(f"staff account {account.email} ({account.role}) {'updated' if args.replace else 'made'}")
    return 0
