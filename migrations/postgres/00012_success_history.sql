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

-- +goose Down
INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at, outcome)
SELECT attempt_id, id, attempt, worker_id, started_at, finished_at, 'succeeded' FROM jobs
WHERE state = 'succeeded' AND attempt_id IS NOT NULL AND started_at IS NOT NULL;
