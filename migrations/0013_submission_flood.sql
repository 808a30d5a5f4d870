-- Requests to the leaderboard submission endpoints, per network and minute (issue 11, item 5): a flood from one
-- network is answered 429 before its body is read. Kept in the database (or Redis when configured) so every web
-- process counts the same requests. The network is a salted hash, never an address; old minutes are deleted.
CREATE TABLE IF NOT EXISTS submission_flood (
    network TEXT NOT NULL,
    minute BIGINT NOT NULL,
    requests INTEGER NOT NULL,
    PRIMARY KEY (network, minute)
);
