-- Private tests (issue 7, item 5): members of an organisation sign in with an account of role `member` in the
-- same accounts table, bound to their organisation's slug (NULL for staff and auditors). Made by
-- `canitbuy staff add EMAIL --role member --org SLUG` or from the staff desk.
ALTER TABLE staff_accounts ADD COLUMN org TEXT;

-- Organisations and the consents they gave, folded from Organisation.* events (a read model: rebuilt from the
-- log like the others). Private runs stay in rm_runs with public = 0; a run a consent covers gets public = 2:
-- shown in the run index and its recording, never counted (ranking, Matrix and repeats read public = 1 only).
CREATE TABLE IF NOT EXISTS rm_organisations (
    organisation_id TEXT PRIMARY KEY,
    slug TEXT NOT NULL,
    fact TEXT NOT NULL                 -- domain.facts.OrganisationFact as JSON
);
