-- +goose Up
-- Indexes of running jobs that the planner cannot mistake for each other.
--
-- Running jobs by worker, each worker's in id order. The orphan listing
-- (store/postgres/recover.go) walks silent workers in order and takes each
-- one's running jobs by id until it has a batch: with the id in the index
-- that is a short index range per worker, read in order and stopped early.
--
-- Running jobs by lease expiry, for the reaper only. Both indexes used to
-- be partial on state = 'running' alone, so either one listed every running
-- job, and with statistics that lag behind a burst of leases (autovacuum
-- analyzes a minute later at best) the planner would look up a silent
-- worker's jobs by reading all running jobs through jobs_running_expiry,
-- once per worker: quadratic in a bulk rescue. The expiry index now covers
-- only rows whose expires_at is set, which a query must imply (the reaper's
-- expires_at <= $1 does), so a lookup by worker has one index to use.
--
-- Only running rows are in these indexes, so they stay small; building one
-- reads the table once (about a second per million rows, writes waiting).
CREATE INDEX jobs_running_worker_id ON jobs (worker_id, id) WHERE state = 'running';
DROP INDEX jobs_running_worker;
ALTER INDEX jobs_running_worker_id RENAME TO jobs_running_worker;
CREATE INDEX jobs_running_expiry_set ON jobs (expires_at) WHERE state = 'running' AND expires_at IS NOT NULL;
DROP INDEX jobs_running_expiry;
ALTER INDEX jobs_running_expiry_set RENAME TO jobs_running_expiry;

-- +goose Down
CREATE INDEX jobs_running_expiry_old ON jobs (expires_at) WHERE state = 'running';
DROP INDEX jobs_running_expiry;
ALTER INDEX jobs_running_expiry_old RENAME TO jobs_running_expiry;
CREATE INDEX jobs_running_worker_old ON jobs (worker_id) WHERE state = 'running';
DROP INDEX jobs_running_worker;
ALTER INDEX jobs_running_worker_old RENAME TO jobs_running_worker;
