-- Read models of CanItBuy: facts folded from the event log, and the documents made from them.
-- Written in the SQL that PostgreSQL and SQLite share (TEXT, BIGINT, INTEGER, ON CONFLICT), so this one file
-- serves both backends (no placeholders here). Everything can be rebuilt from the log.

CREATE TABLE IF NOT EXISTS rm_tracking (
    name TEXT PRIMARY KEY,
    position BIGINT NOT NULL,          -- the last log position applied, written in the same transaction
    global_position BIGINT NOT NULL    -- the last course release or line-up change (affects every week)
);

CREATE TABLE IF NOT EXISTS rm_runs (
    run_id TEXT PRIMARY KEY,
    week TEXT NOT NULL,
    model TEXT NOT NULL,
    station TEXT NOT NULL,
    public INTEGER NOT NULL,           -- 0 for private tests: never shown, never counted
    fact TEXT NOT NULL                 -- domain.facts.RunFact as JSON
);
CREATE INDEX IF NOT EXISTS rm_runs_by_week ON rm_runs (week, model, station);

CREATE TABLE IF NOT EXISTS rm_corrections (
    correction_id TEXT PRIMARY KEY,
    week TEXT,
    position BIGINT NOT NULL,
    fact TEXT NOT NULL                 -- domain.facts.CorrectionFact as JSON
);
CREATE INDEX IF NOT EXISTS rm_corrections_by_week ON rm_corrections (week);

CREATE TABLE IF NOT EXISTS rm_releases (version TEXT PRIMARY KEY, fact TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS rm_labels (model TEXT PRIMARY KEY, label TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS rm_week_ids (record_id TEXT PRIMARY KEY, week TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS rm_weeks (
    week TEXT PRIMARY KEY,
    position BIGINT NOT NULL,          -- the newest event of this week (its documents are computed at it)
    course_version TEXT,
    ranking TEXT,                      -- canonical ranking JSON, as corrected
    matrix TEXT                        -- canonical Matrix JSON, as corrected
);

CREATE TABLE IF NOT EXISTS rm_publications (
    event_position BIGINT PRIMARY KEY,
    week TEXT NOT NULL,
    fact TEXT NOT NULL                 -- domain.facts.PublicationFact as JSON
);
CREATE INDEX IF NOT EXISTS rm_publications_by_week ON rm_publications (week);

CREATE TABLE IF NOT EXISTS rm_published_documents (
    week TEXT NOT NULL,
    position BIGINT NOT NULL,
    ranking TEXT NOT NULL,             -- the bytes whose sha256 Week.Published carries
    matrix TEXT NOT NULL,
    PRIMARY KEY (week, position)
);
