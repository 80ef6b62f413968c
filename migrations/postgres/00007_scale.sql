-- +goose Up
-- What keeps the maintenance and the leases of a queue as cheap with a
-- million finished jobs in the table as in a fresh one.
--
-- Vacuuming jobs: its cadence and its cleaning no longer depend on the
-- size of the table. A lease reads jobs_available from its head, and the
-- head holds the entries of the jobs leased since the last vacuum that
-- cleaned the indexes: every lease walks past them (a million jobs run
-- through a queue left 470,000 such entries, and a lease of 100 read 1,800
-- index pages, 4-20 ms, where a fresh queue's read 80-360). Two settings of
-- 00001 made that grow with history:
--
--   - autovacuum_vacuum_scale_factor 0.01 waits for 1 % of the table: 1,000
--     dead rows in a fresh table, 11,000 beside a million finished jobs.
--     Now a fixed 5,000 dead rows, whatever the size; analyze likewise, so
--     the planner's picture of the states (the partial indexes' sizes)
--     stays as fresh.
--   - Postgres skips cleaning the indexes when fewer than 2 % of the
--     table's pages hold dead rows (vacuum_index_cleanup auto), a number
--     that grows with the finished rows: beside a million, a few hundred
--     jobs a second take several vacuums to reach it, and the dead entries
--     of jobs_available pile up over vacuum after vacuum meanwhile. vacuum_index_cleanup on cleans them
--     at every vacuum; that costs one read of each index per vacuum (2.4 s
--     for a table of a million, at most once a minute, and only while jobs
--     move).
--
-- With both, a queue behind a million finished jobs leases as fast as a
-- fresh one once a vacuum has passed (docs/benchmarks.md). Between two
-- vacuums the head still collects the jobs leased since: autovacuum visits
-- a table at most once per autovacuum_naptime (one minute by default), a
-- server setting that docs/deploy.md suggests lowering for a busy queue.
ALTER TABLE jobs SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 5000,
    vacuum_index_cleanup = on
);

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
ALTER TABLE jobs SET (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.02
);
ALTER TABLE jobs RESET (autovacuum_analyze_threshold, vacuum_index_cleanup);
CREATE INDEX jobs_running_expiry_old ON jobs (expires_at) WHERE state = 'running';
DROP INDEX jobs_running_expiry;
ALTER INDEX jobs_running_expiry_old RENAME TO jobs_running_expiry;
CREATE INDEX jobs_running_worker_old ON jobs (worker_id) WHERE state = 'running';
DROP INDEX jobs_running_worker;
ALTER INDEX jobs_running_worker_old RENAME TO jobs_running_worker;
