-- +goose Up
-- Times are Unix milliseconds (UTC). JSON values are stored as text.

CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    queue            TEXT    NOT NULL,
    kind             TEXT    NOT NULL,
    payload          TEXT,
    priority         INTEGER NOT NULL,
    state            TEXT    NOT NULL,
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    timeout_ms       INTEGER NOT NULL,
    backoff_base_ms  INTEGER NOT NULL,
    backoff_max_ms   INTEGER NOT NULL,
    run_at           INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    unique_key       TEXT,
    tags             TEXT    NOT NULL DEFAULT '[]',
    metadata         TEXT    NOT NULL DEFAULT '{}',
    last_error       TEXT,
    result           TEXT,
    progress         INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    rescues          INTEGER NOT NULL DEFAULT 0,
    dead_reason      TEXT,
    -- The current (or, once succeeded, the settling) delivery. The open
    -- attempt lives on the row so a lease stays one write; it is copied to
    -- attempts when it closes.
    worker_id        TEXT,
    token            TEXT,
    expires_at       INTEGER,
    attempt_id       TEXT
);

-- Partial indexes by state keep lease, promotion, recovery and reaping
-- O(batch) however many finished rows pile up.
CREATE INDEX jobs_available ON jobs (queue, priority DESC, run_at, id) WHERE state = 'available';
CREATE INDEX jobs_scheduled ON jobs (run_at) WHERE state = 'scheduled';
CREATE INDEX jobs_running_worker ON jobs (worker_id) WHERE state = 'running';
CREATE INDEX jobs_running_expiry ON jobs (expires_at) WHERE state = 'running';
CREATE INDEX jobs_finished ON jobs (state, finished_at) WHERE state IN ('succeeded', 'cancelled', 'dead');
CREATE UNIQUE INDEX jobs_unique ON jobs (queue, unique_key)
    WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running');
-- Listing newest first with a filter.
CREATE INDEX jobs_queue_id ON jobs (queue, id);
CREATE INDEX jobs_state_id ON jobs (state, id);

-- Closed attempts, appended in time order: the rowid keeps inserts at the
-- end of the table (a random text key would touch a random page each).
CREATE TABLE attempts (
    seq               INTEGER PRIMARY KEY,
    id                TEXT    NOT NULL,
    job_id            TEXT    NOT NULL,
    attempt           INTEGER NOT NULL,
    worker_id         TEXT    NOT NULL,
    started_at        INTEGER NOT NULL,
    finished_at       INTEGER NOT NULL,
    outcome           TEXT    NOT NULL,
    error             TEXT,
    recovered_by      TEXT,
    last_heartbeat_at INTEGER,
    -- 1 until the worker's next heartbeat reports the job in lost.
    lost_pending      INTEGER
);
CREATE INDEX attempts_job ON attempts (job_id, started_at);
CREATE INDEX attempts_lost ON attempts (worker_id) WHERE lost_pending = 1;
CREATE INDEX attempts_rescued ON attempts (finished_at) WHERE outcome = 'orphaned';

-- Counts by queue and state, kept exact by the store: each transaction
-- adds up how many jobs it moved and writes one row change per queue and
-- state before it commits (a trigger would write once per job), so queue
-- listings and stats never scan jobs.
CREATE TABLE queue_counts (
    queue TEXT    NOT NULL,
    state TEXT    NOT NULL,
    n     INTEGER NOT NULL,
    PRIMARY KEY (queue, state)
) WITHOUT ROWID;

CREATE TABLE queues (
    name   TEXT PRIMARY KEY,
    paused INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE workers (
    id                TEXT PRIMARY KEY,
    queues            TEXT    NOT NULL DEFAULT '[]',
    labels            TEXT    NOT NULL DEFAULT '{}',
    started_at        INTEGER NOT NULL,
    last_heartbeat_at INTEGER NOT NULL
);
CREATE INDEX workers_heartbeat ON workers (last_heartbeat_at);

CREATE TABLE nodes (
    id                TEXT PRIMARY KEY,
    version           TEXT    NOT NULL,
    started_at        INTEGER NOT NULL,
    last_heartbeat_at INTEGER NOT NULL
);

CREATE TABLE idempotency_keys (
    key          TEXT PRIMARY KEY,
    request_hash TEXT    NOT NULL,
    job_id       TEXT    NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE counters;
DROP TABLE idempotency_keys;
DROP TABLE nodes;
DROP TABLE workers;
DROP TABLE queues;
DROP TABLE queue_counts;
DROP TABLE attempts;
DROP TABLE jobs;
