-- Run leases (workers/leases.py): one run executes in one place at a time. A worker holds the row while it
-- executes the run and renews expires_at with a heartbeat; a row whose expires_at has passed belongs to a worker
-- that was lost, and the reaper cuts its run short (our error). Times are seconds since the epoch by the
-- database's clock, so workers with skewed clocks agree. Idempotent: workers apply it on start too.
CREATE TABLE IF NOT EXISTS run_leases (
    run_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
