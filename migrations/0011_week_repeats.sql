-- The repeat-run document of each week (domain.projections.repeats), beside its ranking and Matrix.
-- NULL until the week is next refreshed; ReadModels.repeats_bytes computes it from the facts meanwhile.

ALTER TABLE rm_weeks ADD COLUMN repeats TEXT;
