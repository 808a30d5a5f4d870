-- Sign-in attempts of the staff desk and the members' area (issue 15, item 2), per account and per client address,
-- in the site's database so every web process counts the same attempts (before, each process kept its own, so N
-- processes allowed N times the tries). Rows older than the window are deleted at each attempt.
CREATE TABLE IF NOT EXISTS sign_in_attempts (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,                -- account or address
    name TEXT NOT NULL,                -- the e-mail as typed (lower case) or the client address
    at DOUBLE PRECISION NOT NULL       -- unix seconds
);
CREATE INDEX IF NOT EXISTS sign_in_attempts_by_name ON sign_in_attempts (kind, name, at);
