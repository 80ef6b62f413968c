-- +goose Up
-- Flow control (issue 15): per-queue concurrency caps and rate limits,
-- and per-key ones by a job's concurrency_key.
--
-- Slots are counted from job state, never from a counter that could
-- drift: a limited lease counts the queue's running rows. Counting every
-- running row of a queue would need an index on (queue) over all running
-- jobs, one more entry for every lease of every queue; instead a lease of
-- a limited queue marks its jobs limited, setting limits marks the jobs
-- running then (QueueSetLimits), and the index holds only marked rows. A
-- queue without limits never writes the mark, and pays for nothing.
ALTER TABLE jobs ADD COLUMN concurrency_key TEXT;
ALTER TABLE jobs ADD COLUMN limited INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_running_limited ON jobs (queue, concurrency_key) WHERE state = 'running' AND limited = 1;

-- limits is the queue's store.Limits as JSON (NULL: none); rate_tat the
-- queue rate's GCRA state, microseconds since the epoch (0: a full bucket).
ALTER TABLE queues ADD COLUMN limits TEXT;
ALTER TABLE queues ADD COLUMN rate_tat INTEGER NOT NULL DEFAULT 0;

-- The GCRA state of each key's rate. A row whose tat has passed says no
-- more than no row: RatePrune deletes those.
CREATE TABLE key_rates (
    queue TEXT    NOT NULL,
    key   TEXT    NOT NULL,
    tat   INTEGER NOT NULL,
    PRIMARY KEY (queue, key)
) WITHOUT ROWID;
CREATE INDEX key_rates_tat ON key_rates (tat);

-- Leases each limit held back, per queue and reason, since limits were
-- first set (the dashboard's throttled counts).
CREATE TABLE queue_throttles (
    queue  TEXT    NOT NULL,
    reason TEXT    NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (queue, reason)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE queue_throttles;
DROP INDEX key_rates_tat;
DROP TABLE key_rates;
ALTER TABLE queues DROP COLUMN rate_tat;
ALTER TABLE queues DROP COLUMN limits;
DROP INDEX jobs_running_limited;
ALTER TABLE jobs DROP COLUMN limited;
ALTER TABLE jobs DROP COLUMN concurrency_key;
