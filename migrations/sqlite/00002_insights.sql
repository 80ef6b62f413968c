-- +goose Up
-- The dashboard's reads (store.Insights). Every index here is partial on a
-- state that few rows are in, so only the rows that enter or leave that
-- state pay for it; enqueue, lease and ack write none of them.

-- Retries: scheduled jobs waiting out a backoff, soonest first, across
-- queues and per queue (which also counts QueueList's retrying per queue).
CREATE INDEX jobs_retrying ON jobs (run_at, id) WHERE state = 'scheduled' AND attempt > 0;
CREATE INDEX jobs_retrying_queue ON jobs (queue, run_at, id) WHERE state = 'scheduled' AND attempt > 0;

-- The dead-letter list, most recently finished first, across queues and
-- per queue.
CREATE INDEX jobs_dead ON jobs (finished_at, id) WHERE state = 'dead';
CREATE INDEX jobs_dead_queue ON jobs (queue, finished_at, id) WHERE state = 'dead';

-- Closed attempts per minute and outcome, for the throughput chart: each
-- transaction adds up what it closed and writes one row change per minute
-- and outcome, like queue_counts.
CREATE TABLE throughput (
    minute  INTEGER NOT NULL, -- Unix minutes
    outcome TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (minute, outcome)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE throughput;
DROP INDEX jobs_dead_queue;
DROP INDEX jobs_dead;
DROP INDEX jobs_retrying_queue;
DROP INDEX jobs_retrying;
