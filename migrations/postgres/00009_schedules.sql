-- +goose Up
-- Periodic schedules: one row per schedule, fired by a compare-and-set on
-- (name, next_fire_at, version) in the transaction that inserts its jobs.
-- job is the job template as JSON text (store.ScheduleJob).
CREATE TABLE schedules (
    name              text        PRIMARY KEY,
    cron              text,
    every_ms          bigint,
    timezone          text        NOT NULL,
    job               text        NOT NULL,
    catchup           text        NOT NULL,
    catchup_window_ms bigint      NOT NULL,
    max_catchup       int         NOT NULL,
    overlap           text        NOT NULL,
    jitter_ms         bigint      NOT NULL,
    paused            boolean     NOT NULL DEFAULT false,
    source            text        NOT NULL,
    spec_hash         text        NOT NULL,
    next_fire_at      timestamptz NOT NULL,
    last_fire_at      timestamptz,
    last_job_id       uuid,
    fires_total       bigint      NOT NULL DEFAULT 0,
    skipped_total     bigint      NOT NULL DEFAULT 0,
    missed_total      bigint      NOT NULL DEFAULT 0,
    version           bigint      NOT NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE NOT paused;

-- The schedule that fired a job and the slot it fired for. Neither ever
-- changes after the insert, so the index keeps a job's updates HOT.
ALTER TABLE jobs ADD COLUMN schedule text, ADD COLUMN scheduled_for timestamptz;
CREATE INDEX jobs_schedule_id ON jobs (schedule, id) WHERE schedule IS NOT NULL;

-- +goose Down
DROP INDEX jobs_schedule_id;
ALTER TABLE jobs DROP COLUMN scheduled_for, DROP COLUMN schedule;
DROP TABLE schedules;
