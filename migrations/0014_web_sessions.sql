-- Sessions of the staff desk and the members' area (issue 18, item 9): a signed cookie is good only while its row
-- is here, so signing out (which deletes the row) ends it on the server, for every site process at once.
CREATE TABLE IF NOT EXISTS web_sessions (
    sid TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    audience TEXT NOT NULL,            -- staff (the desk) or org (the members' area)
    expires_at BIGINT NOT NULL         -- unix seconds; expired rows are deleted when a session opens
);
