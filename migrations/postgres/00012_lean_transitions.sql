-- +goose Up
-- A success writes no history row any more (store/postgres/settle.go,
-- ackSQL): it is a job's last attempt, and the succeeded row holds every
-- fact of it, so the job page and the throughput chart read it from there.
-- The rows earlier acks wrote would now show twice (and count twice): the
-- ones whose job still holds that success go. Successes of jobs already
-- pruned or deleted had their rows removed with them. One pass over the
-- attempts, about a second per million at the upgrade.
DELETE FROM attempts a USING jobs j
WHERE a.outcome = 'succeeded' AND j.id = a.job_id AND j.state = 'succeeded' AND j.attempt_id = a.id;

-- jobs_queue_id (a queue's jobs newest first, for lists and searches)
-- leaves running jobs out: every lease wrote an entry in it for the
-- running version of each job, and every ack another for the succeeded
-- one. Running jobs are as many as leases in flight, and a list of a
-- queue reads them apart (jobs_running_worker; store/postgres/admin.go,
-- listQuery). One index entry fewer per lease. Built before the old one
-- is dropped, so lists keep an index meanwhile; reads the table once
-- (about a second per million jobs, writes waiting).
CREATE INDEX jobs_queue_id_idle ON jobs (queue, id) WHERE state <> 'running';
DROP INDEX jobs_queue_id;
ALTER INDEX jobs_queue_id_idle RENAME TO jobs_queue_id;

-- +goose Down
CREATE INDEX jobs_queue_id_all ON jobs (queue, id);
DROP INDEX jobs_queue_id;
ALTER INDEX jobs_queue_id_all RENAME TO jobs_queue_id;
INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at, outcome)
SELECT attempt_id, id, attempt, worker_id, started_at, finished_at, 'succeeded' FROM jobs
WHERE state = 'succeeded' AND attempt_id IS NOT NULL AND started_at IS NOT NULL;
