-- +goose Up
-- Times are timestamptz. The store truncates every instant to the
-- millisecond before it writes it (store.Trunc), so values round-trip
-- exactly; timestamptz rather than bigint milliseconds because an operator
-- reading the tables with psql, or writing a retention query by hand, should
-- see times, and the two cost the same eight bytes. Mutating statements never
-- call now(): the time comes in the parameters, so replicas and tests decide
-- the instant (see store.Store).
--
-- Storage settings, table by table:
--
-- jobs: every lease and every settle is a non-HOT update (state is in the
-- partial index predicates), so a job leaves two or three dead versions
-- behind in its short life. fillfactor 80 keeps a fifth of each page free so
-- those versions usually land on the page of the row they replace: one heap
-- page dirtied per transition instead of two, and page pruning reclaims the
-- space without waiting for VACUUM. Autovacuum runs at 1 % of the table
-- (default 20 %) and without cost delay: dead entries at the head of
-- jobs_available are what a lease scans past, so they must go quickly even
-- when a million finished rows make 20 % a very large number.
--
-- workers, nodes: one row each, rewritten on every lease or heartbeat. No
-- index covers last_heartbeat_at, so those rewrites are HOT; fillfactor 50
-- leaves room for them on the same page.
--
-- queue_count_deltas: append-only between folds, emptied once a tick; it
-- is vacuumed after a thousand dead rows whatever its size.

CREATE TABLE jobs (
    id               uuid        PRIMARY KEY,
    queue            text        NOT NULL,
    kind             text        NOT NULL,
    state            text        NOT NULL CHECK (state IN
                         ('scheduled', 'available', 'running', 'succeeded', 'dead', 'cancelled')),
    priority         integer     NOT NULL,
    attempt          integer     NOT NULL DEFAULT 0,
    max_attempts     integer     NOT NULL,
    rescues          integer     NOT NULL DEFAULT 0,
    timeout_ms       bigint      NOT NULL,
    backoff_base_ms  bigint      NOT NULL,
    backoff_max_ms   bigint      NOT NULL,
    run_at           timestamptz NOT NULL,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    finished_at      timestamptz,
    progress         integer,
    cancel_requested boolean     NOT NULL DEFAULT false,
    unique_key       text,
    dead_reason      text,
    last_error       text,
    tags             jsonb       NOT NULL DEFAULT '[]',
    payload          jsonb,
    metadata         jsonb       NOT NULL DEFAULT '{}',
    result           jsonb,
    -- The current (or, once succeeded, the settling) delivery. The open
    -- attempt lives on the row so a lease stays one write; it is copied to
    -- attempts when it closes. A succeeded row keeps its token so a repeated
    -- ack under it is answered, not refused.
    worker_id        text,
    token            text,
    expires_at       timestamptz,
    attempt_id       uuid
) WITH (
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0.02
);

-- Partial indexes by state keep lease, promotion, recovery and reaping
-- O(batch) however many finished rows pile up: a finished row is in none of
-- them.
CREATE INDEX jobs_available ON jobs (queue, priority DESC, run_at, id) WHERE state = 'available';
CREATE INDEX jobs_scheduled ON jobs (run_at) WHERE state = 'scheduled';
CREATE INDEX jobs_running_worker ON jobs (worker_id) WHERE state = 'running';
CREATE INDEX jobs_running_expiry ON jobs (expires_at) WHERE state = 'running';
-- Pruning reads the oldest finished rows of each retention class.
CREATE INDEX jobs_succeeded_finished ON jobs (finished_at) WHERE state IN ('succeeded', 'cancelled');
CREATE INDEX jobs_dead_finished ON jobs (finished_at) WHERE state = 'dead';
-- unique_key is unique per queue among unfinished jobs; enqueue relies on
-- it with ON CONFLICT, so concurrent producers cannot both insert.
CREATE UNIQUE INDEX jobs_unique ON jobs (queue, unique_key)
    WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running');
-- Listing a queue newest first (UUIDv7 ids are time-ordered). Every index
-- that is not partial gains an entry on every transition of every job, so
-- there is no (state, id) index: a listing by state reads the partial
-- index of that state, or walks the primary key backwards for succeeded
-- jobs, which dominate the table.
CREATE INDEX jobs_queue_id ON jobs (queue, id);

-- Closed attempts, appended in time order. No primary key: nothing looks
-- an entry up by its own id, and every index is paid for on each insert.
CREATE TABLE attempts (
    job_id            uuid        NOT NULL,
    id                uuid        NOT NULL,
    attempt           integer     NOT NULL,
    worker_id         text        NOT NULL,
    started_at        timestamptz NOT NULL,
    finished_at       timestamptz NOT NULL,
    outcome           text        NOT NULL,
    error             text,
    recovered_by      text,
    last_heartbeat_at timestamptz,
    -- true until the worker's next heartbeat reports the job in lost.
    lost_pending      boolean
);
CREATE INDEX attempts_job ON attempts (job_id, started_at);
CREATE INDEX attempts_lost ON attempts (worker_id) WHERE lost_pending;
CREATE INDEX attempts_rescued ON attempts (finished_at) WHERE outcome = 'orphaned';

-- Counts by queue and state (and 'retrying': scheduled with attempt > 0).
-- Writers never update a shared counter row: that row lock would serialise
-- every lease and ack of a queue behind each other's commit. The triggers
-- below append one signed delta per (queue, state) a statement changed;
-- JobPromote folds the deltas into queue_counts once a tick, and readers
-- add both, in one snapshot, so the sum is always exact.
CREATE TABLE queue_counts (
    queue text   NOT NULL,
    state text   NOT NULL,
    n     bigint NOT NULL,
    PRIMARY KEY (queue, state)
);

CREATE TABLE queue_count_deltas (
    queue text   NOT NULL,
    state text   NOT NULL,
    n     bigint NOT NULL
) WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000
);

-- tether_channel names the LISTEN/NOTIFY channel of the schema's store:
-- stores in different schemas of one database never wake each other.
-- Channel names are identifiers (at most 63 bytes), hence the hash of a
-- long schema name.
-- +goose StatementBegin
CREATE FUNCTION tether_channel(schema text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN octet_length(schema) <= 56 THEN 'tether_' || schema
                ELSE 'tether_' || md5(schema) END
$$;
-- +goose StatementEnd

-- Statement-level triggers keep the counts and the wake-ups in the
-- statement that changed the jobs, whoever wrote it. Each appends one delta
-- per (queue, state) the statement changed, and notifies once per queue
-- whose available count it raised (enqueue, promote, rescue, reap, release,
-- fail with retry_in 0, retry, run, deregister), not once per job. Postgres
-- delivers notifications at commit, so a leaser woken by one sees the jobs.
-- +goose StatementBegin
CREATE FUNCTION tether_jobs_changed() RETURNS trigger
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
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.queue);
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
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.queue);
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

CREATE TRIGGER jobs_inserted AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tether_jobs_changed();
CREATE TRIGGER jobs_updated AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tether_jobs_changed();
CREATE TRIGGER jobs_deleted AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tether_jobs_changed();

CREATE TABLE queues (
    name   text    PRIMARY KEY,
    paused boolean NOT NULL DEFAULT false
);

CREATE TABLE workers (
    id                text        PRIMARY KEY,
    queues            text[]      NOT NULL DEFAULT '{}',
    labels            jsonb       NOT NULL DEFAULT '{}',
    started_at        timestamptz NOT NULL,
    last_heartbeat_at timestamptz NOT NULL
) WITH (fillfactor = 50);

CREATE TABLE nodes (
    id                text        PRIMARY KEY,
    version           text        NOT NULL,
    started_at        timestamptz NOT NULL,
    last_heartbeat_at timestamptz NOT NULL
) WITH (fillfactor = 50);

CREATE TABLE idempotency_keys (
    key          text        PRIMARY KEY,
    request_hash text        NOT NULL,
    job_id       uuid        NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

CREATE TABLE counters (
    name  text   PRIMARY KEY,
    value bigint NOT NULL
);

-- +goose Down
DROP TABLE counters;
DROP TABLE idempotency_keys;
DROP TABLE nodes;
DROP TABLE workers;
DROP TABLE queues;
DROP TABLE jobs;
DROP FUNCTION tether_jobs_changed();
DROP FUNCTION tether_channel(text);
DROP TABLE queue_count_deltas;
DROP TABLE queue_counts;
DROP TABLE attempts;
