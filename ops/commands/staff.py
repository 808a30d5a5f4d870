"""`canitbuy staff add EMAIL`: make (or replace) a staff desk account. The password is prompted for at a terminal,
or read from standard input with --password-stdin or when standard input is no terminal (a pipe, a file); it is
never echoed, logged or stored anywhere but as an argon2id hash.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING

from ops.commands import HELP, Subcommands

if TYPE_CHECKING:
    from adapters.settings import Settings


def add_parser(subcommands: Subcommands) -> argparse.ArgumentParser:
    staff = subcommands.add_parser("staff", help=HELP["staff"])
    sub = staff.add_subparsers(dest="staff_command", metavar="STAFF_COMMAND", required=True)
    add = sub.add_parser("add", help="make a staff desk account")
    add.add_argument("email")
    add.add_argument("--role", choices=["staff", "auditor", "member"], default="staff",
                     help="staff changes the record; auditor reads only; member sees its organisation's private "
                          "tests under /org (default staff)")
    add.add_argument("--org", metavar="SLUG", help="the organisation of a member (registered on the staff desk)")
    add.add_argument("--password-stdin", action="store_true",
                     help="read the password from standard input (as when standard input is no terminal)")
    add.add_argument("--replace", action="store_true", help="set a new password (and role) for an existing account")
    add.set_defaults(handler=add_account)
    return staff


NO_PASSWORD = "staff add: no password given (type it at a terminal or pipe it on stdin)"  # noqa: S105 - a message


def _password(from_stdin: bool) -> str:
    """The first line of standard input with --password-stdin or when it is no terminal (getpass would then read
    it anyway, warning that it cannot hide the echo, and end in a bare EOFError when it is empty); else typed twice
    at the terminal."""
    from ops.cli import CommandError

    stdin = sys.stdin  # None when the command was started with its standard input closed
    if from_stdin or stdin is None or not stdin.isatty():
        try:
            password = stdin.readline().rstrip("\r\n") if stdin is not None else ""
        except UnicodeDecodeError:
            raise CommandError("staff add: the password is not text (its bytes are not UTF-8)") from None
    else:
        try:
            password = getpass.getpass("Password: ")
            if password and getpass.getpass("Again: ") != password:
                raise CommandError("the two passwords differ")
        except EOFError:  # Ctrl-D at the prompt
            password = ""
    if not password:
        raise CommandError(NO_PASSWORD)
    return password


def add_account(args: argparse.Namespace) -> int:
    from adapters.settings import Settings, SettingsError
    from adapters.sqldb import SqlDb
    from adapters.staff_accounts import AccountError, StaffAccounts
    from ops.cli import CommandError

    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise CommandError(str(error)) from None
    password = _password(args.password_stdin)  # first: a command without one changes nothing
    email = _checked(args.email, password, args.role, args.org)  # everything checked before anything is recorded
    db = SqlDb(settings)
    db.migrate()
    with db.transaction() as tx:
        exists = tx.fetchone("SELECT 1 FROM staff_accounts WHERE email = ?", (email,)) is not None
    if exists and not args.replace:
        raise CommandError(f"{email} already has an account (use --replace to set a new password)")
    if args.replace and not exists:
        raise CommandError(f"staff add --replace: there is no account {email} to replace (leave out --replace to "
                           "make one)")
    if args.role == "member":
        _join_organisation(settings, email, args.org)
    try:
        account = StaffAccounts(db).add(email, password, args.role, replace=args.replace, org=args.org)
    except AccountError as error:
        raise CommandError(str(error)) from None
    print(f"staff account {account.email} ({account.role}) {'updated' if args.replace else 'made'}")
    return 0


MAX_EMAIL = 254
"""The longest address a mailbox may have (RFC 5321's path limit less its angle brackets)."""
MAX_PASSWORD = 1024


def _checked(email: str, password: str, role: str, org: str | None) -> str:
    """The normalised e-mail address once the address, the password, the role and the organisation are all
    acceptable; else one line saying what is not."""
    from adapters.staff_accounts import MIN_PASSWORD, AccountError, normal_email
    from ops.cli import CommandError

    if len(email) > MAX_EMAIL:
        raise CommandError(f"staff add: the e-mail address is longer than {MAX_EMAIL} characters")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or 0xD800 <= ord(c) < 0xE000 for c in email):
        raise CommandError("staff add: the e-mail address has a control character in it")
    try:
        email = normal_email(email)
    except AccountError as error:
        raise CommandError(str(error)) from None
    try:
        password.encode("utf-8")
    except UnicodeEncodeError:
        raise CommandError("staff add: the password is not text (its bytes are not UTF-8)") from None
    if len(password) < MIN_PASSWORD:
        raise CommandError(f"the password must have at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise CommandError(f"the password must have at most {MAX_PASSWORD} characters")
    if role == "member" and not org:
        raise CommandError("a member account needs --org SLUG")
    if role != "member" and org is not None:
        raise CommandError("a member account needs its organisation (--org), and only a member has one")
    return email


def _join_organisation(settings: Settings, email: str, org: str | None) -> None:
    """A member's organisation must be registered; the membership itself is an event (Organisation.MemberAdded),
    recorded here when the account is made from the command line."""
    from adapters.staff_accounts import AccountError, normal_email
    from adapters.wiring import build_runtime
    from domain.orgs.organisations import OrganisationError
    from ops.cli import CommandError

    if not org:
        raise CommandError("a member account needs --org SLUG")
    try:
        email = normal_email(email)
    except AccountError as error:
        raise CommandError(str(error)) from None
    with build_runtime(settings) as runtime:
        try:
            if email not in runtime.record.organisation(org).members:
                runtime.record.add_member(org, email, by="cli")
        except OrganisationError as error:
            raise CommandError(str(error)) from None
