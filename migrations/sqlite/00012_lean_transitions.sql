-- +goose Up
-- A success writes no history row any more (store/sqlite/ackbatch.go): it
-- is a job's last attempt, and the succeeded row holds every fact of it,
-- so the job page reads it from there. The rows earlier acks wrote would
-- now show twice: the ones whose job still holds that success go. (The
-- throughput chart counts in its own table, unchanged.) Postgres's 00012
-- also narrows its jobs_queue_id; SQLite's lists are unchanged.
DELETE FROM attempts WHERE outcome = 'succeeded' AND EXISTS (
    SELECT 1 FROM jobs j WHERE j.id = attempts.job_id AND j.state = 'succeeded' AND j.attempt_id = attempts.id);

-- +goose Down
INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at, outcome)
SELECT attempt_id, id, attempt, worker_id, started_at, finished_at, 'succeeded' FROM jobs
WHERE state = 'succeeded' AND attempt_id IS NOT NULL AND started_at IS NOT NULL;
