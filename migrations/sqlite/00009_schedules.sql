-- +goose Up
-- Periodic schedules: one row per schedule, fired by a compare-and-set on
-- (name, next_fire_at, version) in the transaction that inserts its jobs.
-- Times are Unix milliseconds; job is the job template as JSON
-- (store.ScheduleJob).
CREATE TABLE schedules (
    name              TEXT PRIMARY KEY,
    cron              TEXT,
    every_ms          INTEGER,
    timezone          TEXT    NOT NULL,
    job               TEXT    NOT NULL,
    catchup           TEXT    NOT NULL,
    catchup_window_ms INTEGER NOT NULL,
    max_catchup       INTEGER NOT NULL,
    overlap           TEXT    NOT NULL,
    jitter_ms         INTEGER NOT NULL,
    paused            INTEGER NOT NULL DEFAULT 0,
    source            TEXT    NOT NULL,
    spec_hash         TEXT    NOT NULL,
    next_fire_at      INTEGER NOT NULL,
    last_fire_at      INTEGER,
    last_job_id       TEXT,
    fires_total       INTEGER NOT NULL DEFAULT 0,
    skipped_total     INTEGER NOT NULL DEFAULT 0,
    missed_total      INTEGER NOT NULL DEFAULT 0,
    version           INTEGER NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE paused = 0;

-- The schedule that fired a job and the slot it fired for; listing a
-- schedule's jobs newest first reads the index.
ALTER TABLE jobs ADD COLUMN schedule TEXT;
ALTER TABLE jobs ADD COLUMN scheduled_for INTEGER;
CREATE INDEX jobs_schedule_id ON jobs (schedule, id) WHERE schedule IS NOT NULL;

-- +goose Down
DROP INDEX jobs_schedule_id;
ALTER TABLE jobs DROP COLUMN scheduled_for;
ALTER TABLE jobs DROP COLUMN schedule;
DROP TABLE schedules;
