-- Staff accounts of the staff desk (web/staff): kept in a table of their own, never in events, because a
-- password hash is not a fact of the record and must be replaceable. Made by `canitbuy staff add EMAIL`.
-- password_hash is argon2id (argon2-cffi's encoded form, parameters included). role: staff or auditor.
CREATE TABLE IF NOT EXISTS staff_accounts (
    email TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0
);
