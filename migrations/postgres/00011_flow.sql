-- +goose Up
-- Flow control (issue 15): per-queue concurrency caps and rate limits,
-- and per-key ones by a job's concurrency_key.
--
-- Slots are counted from job state, never from a counter that could
-- drift: a limited lease counts the queue's running rows, under the lock of
-- the queue's row. Counting every running row of a queue would need an
-- index on (queue) over all running jobs: one more index entry for every
-- lease of every queue. Instead a lease of a limited queue marks its jobs
-- limited, setting limits marks the jobs running then (QueueSetLimits,
-- which waits for the leases in flight), and the index holds only marked
-- rows. A queue without limits never writes the mark, and pays nothing.
ALTER TABLE jobs ADD COLUMN concurrency_key text, ADD COLUMN limited boolean NOT NULL DEFAULT false;
CREATE INDEX jobs_running_limited ON jobs (queue, concurrency_key) WHERE state = 'running' AND limited;

-- limits is the queue's store.Limits (NULL: none), which the lease of a
-- queue without limits checks in the same probe as paused; rate_tat is the
-- queue rate's GCRA state, microseconds since the epoch (0: a full
-- bucket).
ALTER TABLE queues ADD COLUMN limits jsonb, ADD COLUMN rate_tat bigint NOT NULL DEFAULT 0;

-- The GCRA state of each key's rate. A row whose tat has passed says no
-- more than no row: RatePrune deletes those.
CREATE TABLE key_rates (
    queue text   NOT NULL,
    key   text   NOT NULL,
    tat   bigint NOT NULL,
    PRIMARY KEY (queue, key)
);
CREATE INDEX key_rates_tat ON key_rates (tat);

-- Leases each limit held back, per queue and reason (the dashboard's
-- throttled counts). Only leases of limited queues write here, under the
-- lock of the queue's row.
CREATE TABLE queue_throttles (
    queue  text   NOT NULL,
    reason text   NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (queue, reason)
);

-- A freed slot wakes waiting leasers on every replica: the statement
-- trigger, which every write of jobs passes through whatever its path
-- (ack, settle, fail, release, rescue, reap, deregister), notifies the
-- queue's channel when a statement lowered the running count of a queue
-- whose limits count slots, with the number of slots freed. Queues without
-- such limits cost one primary-key probe of queues per statement that ended
-- deliveries.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_jobs_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    d record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR d IN INSERT INTO queue_count_deltas (queue, state, n)
            SELECT queue, k, count(*) FROM (
                SELECT queue, state AS k FROM new_rows
                UNION ALL
                SELECT queue, 'retrying' FROM new_rows WHERE state = 'scheduled' AND attempt > 0
            ) c GROUP BY queue, k
            RETURNING queue, state, n
        LOOP
            IF d.state = 'available' THEN
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.n || ':' || d.queue);
            END IF;
        END LOOP;
    ELSIF TG_OP = 'UPDATE' THEN
        FOR d IN INSERT INTO queue_count_deltas (queue, state, n)
            SELECT queue, k, sum(n) FROM (
                SELECT queue, state AS k, 1 AS n FROM new_rows
                UNION ALL
                SELECT queue, 'retrying', 1 FROM new_rows WHERE state = 'scheduled' AND attempt > 0
                UNION ALL
                SELECT queue, state, -1 FROM old_rows
                UNION ALL
                SELECT queue, 'retrying', -1 FROM old_rows WHERE state = 'scheduled' AND attempt > 0
            ) c GROUP BY queue, k HAVING sum(n) <> 0
            RETURNING queue, state, n
        LOOP
            IF d.state = 'available' AND d.n > 0 THEN
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.n || ':' || d.queue);
            ELSIF d.state = 'running' AND d.n < 0 AND EXISTS (SELECT 1 FROM queues q
                    WHERE q.name = d.queue AND (q.limits ? 'concurrency' OR q.limits ? 'key_concurrency')) THEN
                -- Deliveries ended in a queue that counts slots: as many
                -- waiting leasers as slots freed may now lease.
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), -d.n || ':' || d.queue);
            END IF;
        END LOOP;
    ELSE
        INSERT INTO queue_count_deltas (queue, state, n)
        SELECT queue, k, -count(*) FROM (
            SELECT queue, state AS k FROM old_rows
            UNION ALL
            SELECT queue, 'retrying' FROM old_rows WHERE state = 'scheduled' AND attempt > 0
        ) c GROUP BY queue, k;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_jobs_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    d record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR d IN INSERT INTO queue_count_deltas (queue, state, n)
            SELECT queue, k, count(*) FROM (
                SELECT queue, state AS k FROM new_rows
                UNION ALL
                SELECT queue, 'retrying' FROM new_rows WHERE state = 'scheduled' AND attempt > 0
            ) c GROUP BY queue, k
            RETURNING queue, state, n
        LOOP
            IF d.state = 'available' THEN
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.n || ':' || d.queue);
            END IF;
        END LOOP;
    ELSIF TG_OP = 'UPDATE' THEN
        FOR d IN INSERT INTO queue_count_deltas (queue, state, n)
            SELECT queue, k, sum(n) FROM (
                SELECT queue, state AS k, 1 AS n FROM new_rows
                UNION ALL
                SELECT queue, 'retrying', 1 FROM new_rows WHERE state = 'scheduled' AND attempt > 0
                UNION ALL
                SELECT queue, state, -1 FROM old_rows
                UNION ALL
                SELECT queue, 'retrying', -1 FROM old_rows WHERE state = 'scheduled' AND attempt > 0
            ) c GROUP BY queue, k HAVING sum(n) <> 0
            RETURNING queue, state, n
        LOOP
            IF d.state = 'available' AND d.n > 0 THEN
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.n || ':' || d.queue);
            END IF;
        END LOOP;
    ELSE
        INSERT INTO queue_count_deltas (queue, state, n)
        SELECT queue, k, -count(*) FROM (
            SELECT queue, state AS k FROM old_rows
            UNION ALL
            SELECT queue, 'retrying' FROM old_rows WHERE state = 'scheduled' AND attempt > 0
        ) c GROUP BY queue, k;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
DROP TABLE queue_throttles;
DROP TABLE key_rates;
ALTER TABLE queues DROP COLUMN rate_tat, DROP COLUMN limits;
DROP INDEX jobs_running_limited;
ALTER TABLE jobs DROP COLUMN limited, DROP COLUMN concurrency_key;
