-- +goose Up
-- The dashboard's reads (store.Insights), mirroring SQLite's 00002. Every
-- index is partial on a state that few rows are in, so only the rows that
-- enter or leave that state pay for it; enqueue, lease and ack write none.
-- How this backend counts throughput per minute is left to its Insights
-- implementation (a shared per-minute counter row would serialise acks).

-- Retries: scheduled jobs waiting out a backoff, soonest first, across
-- queues and per queue.
CREATE INDEX jobs_retrying ON jobs (run_at, id) WHERE state = 'scheduled' AND attempt > 0;
CREATE INDEX jobs_retrying_queue ON jobs (queue, run_at, id) WHERE state = 'scheduled' AND attempt > 0;

-- The dead-letter list, most recently finished first, across queues and
-- per queue.
CREATE INDEX jobs_dead ON jobs (finished_at, id) WHERE state = 'dead';
CREATE INDEX jobs_dead_queue ON jobs (queue, finished_at, id) WHERE state = 'dead';

-- +goose Down
DROP INDEX jobs_dead_queue;
DROP INDEX jobs_dead;
DROP INDEX jobs_retrying_queue;
DROP INDEX jobs_retrying;
