-- +goose Up
-- Running jobs by worker, each worker's in id order, as on Postgres: the
-- orphan listing (store/sqlite/recover.go) takes a silent worker's running
-- jobs by id, which the index now hands over in order instead of through a
-- temporary sort.
CREATE INDEX jobs_running_worker_id ON jobs (worker_id, id) WHERE state = 'running';
DROP INDEX jobs_running_worker;
CREATE INDEX jobs_running_worker ON jobs (worker_id, id) WHERE state = 'running';
DROP INDEX jobs_running_worker_id;

-- +goose Down
CREATE INDEX jobs_running_worker_old ON jobs (worker_id) WHERE state = 'running';
DROP INDEX jobs_running_worker;
CREATE INDEX jobs_running_worker ON jobs (worker_id) WHERE state = 'running';
DROP INDEX jobs_running_worker_old;
