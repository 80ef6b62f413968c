-- +goose Up
-- The version Postgres's 00012 holds (a success writes no history row
-- there, and its jobs_queue_id leaves running jobs out). SQLite's store is
-- unchanged by it.
SELECT 1;

-- +goose Down
SELECT 1;
