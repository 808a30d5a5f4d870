"""Staff accounts: e-mail, role and an argon2id password hash, in the staff_accounts table (migrations/).

Passwords never reach events or logs. Checking an unknown e-mail still spends one hash, so the time a
sign-in takes does not tell whether the account exists.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from adapters.sqldb import SqlDb

ROLES = ("staff", "auditor", "member")
DESK_ROLES = ("staff", "auditor")
"""Roles that may use the staff desk; a member (of an organisation) sees only its private tests, under /org."""
MIN_PASSWORD = 12
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class AccountError(ValueError):
    """A request to make an account that cannot be met; the message says why."""


class Account(msgspec.Struct, frozen=True):
    email: str
    role: str
    password_hash: str
    org: str | None = None
    """The organisation (slug) of a member; None for staff and auditors."""

    @property
    def can_act(self) -> bool:
        """Auditors read; only staff change the record."""
        return self.role == "staff"


class StaffAccounts:
    def __init__(self, db: SqlDb, hasher: PasswordHasher | None = None) -> None:
        self.db = db
        self.hasher = hasher or PasswordHasher()
        self._dummy = self.hasher.hash("not a password of anyone")

    def add(
        self, email: str, password: str, role: str = "staff", *, replace: bool = False, org: str | None = None
    ) -> Account:
        email = normal_email(email)
        if role not in ROLES:
            raise AccountError(f"role must be one of {', '.join(ROLES)}")
        if (role == "member") != (org is not None):
            raise AccountError("a member account needs its organisation (--org), and only a member has one")
        if len(password) < MIN_PASSWORD:
            raise AccountError(f"the password must have at least {MIN_PASSWORD} characters")
        account = Account(email, role, self.hasher.hash(password), org)
        with self.db.transaction() as tx:
            exists = tx.fetchone("SELECT 1 FROM staff_accounts WHERE email = ?", (email,))
            if exists and not replace:
                raise AccountError(f"{email} already has an account (use --replace to set a new password)")
            tx.execute("DELETE FROM staff_accounts WHERE email = ?", (email,))
            tx.execute("DELETE FROM web_sessions WHERE email = ?", (email,))  # a new password or role ends them all
            tx.execute(
                "INSERT INTO staff_accounts (email, role, password_hash, created_at, disabled, org) "
                "VALUES (?, ?, ?, ?, 0, ?)",
                (email, role, account.password_hash, datetime.now(UTC).isoformat(), org),
            )
        return account

    def get(self, email: str) -> Account | None:
        with self.db.transaction() as tx:
            row = tx.fetchone(
                "SELECT email, role, password_hash, org FROM staff_accounts WHERE email = ? AND disabled = 0",
                (email.strip().lower(),),
            )
        return Account(str(row[0]), str(row[1]), str(row[2]), row[3]) if row else None

    def verify(self, email: str, password: str) -> Account | None:
        """The account when the password is right; None otherwise (same cost either way)."""
        account = self.get(email)
        try:
            self.hasher.verify(account.password_hash if account else self._dummy, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return None
        return account


def normal_email(email: str) -> str:
    email = email.strip().lower()
    if not _EMAIL.match(email):
        raise AccountError(f"{email!r} is not an e-mail address")
    return email
