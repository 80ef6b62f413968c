-- +goose Up
-- Each hour of the per-minute roll-ups of 00010, summed, so that a queue
-- page over a week reads 168 rows per queue (and kind) instead of 10,080:
-- grouping a week of minutes took 20-50 ms per chart on a loaded 2-core
-- machine (docs/benchmarks.md). store/postgres/depth.go and kindminute.go
-- rewrite an hour's row from its minutes in the statement that writes a
-- minute, and read the hours a range holds whole, the minutes only at its
-- ends.

-- The deepest sample of each hour (the earliest of equals), as a list by
-- the hour picks it.
CREATE TABLE queue_depth_hours (
    queue     text        NOT NULL,
    hour      timestamptz NOT NULL,
    minute    timestamptz NOT NULL,
    available bigint      NOT NULL,
    scheduled bigint      NOT NULL,
    PRIMARY KEY (queue, hour)
);
CREATE INDEX queue_depth_hours_hour ON queue_depth_hours (hour);

-- What finished in each hour per queue and kind: the minutes' counts
-- summed, their histograms' texts joined (store.ParseHistogram adds up
-- the buckets that repeat).
CREATE TABLE queue_minute_hours (
    queue     text        NOT NULL,
    hour      timestamptz NOT NULL,
    kind      text        NOT NULL,
    succeeded bigint      NOT NULL,
    dead      bigint      NOT NULL,
    wait      text        NOT NULL,
    run       text        NOT NULL,
    PRIMARY KEY (queue, hour, kind)
);
CREATE INDEX queue_minute_hours_hour ON queue_minute_hours (hour);

-- The hours of the minutes already rolled. Hours are aligned to the Unix
-- epoch, as the lists' steps are, whatever the session's time zone.
INSERT INTO queue_depth_hours (queue, hour, minute, available, scheduled)
SELECT DISTINCT ON (queue, date_bin('1 hour', minute, 'epoch'))
       queue, date_bin('1 hour', minute, 'epoch'), minute, available, scheduled
FROM queue_depth
ORDER BY queue, date_bin('1 hour', minute, 'epoch'), available + scheduled DESC, minute;

INSERT INTO queue_minute_hours (queue, hour, kind, succeeded, dead, wait, run)
SELECT queue, date_bin('1 hour', minute, 'epoch'), kind, sum(succeeded), sum(dead),
       string_agg(wait, ',' ORDER BY minute), string_agg(run, ',' ORDER BY minute)
FROM queue_minutes
GROUP BY 1, 2, 3;

-- The dead-letter list of one kind, most recently finished first: the
-- dashboard's kind filter reads that kind's dead jobs only, where it read
-- a window of 5,000 dead jobs of every kind and compared each (a kind with
-- none took 31 ms idle at a million jobs, 330 ms on the loaded machine).
-- Built in the migration's transaction, as 00002's were: writes to jobs
-- wait for one scan of the table.
CREATE INDEX jobs_dead_kind ON jobs (kind, finished_at, id) WHERE state = 'dead';

-- +goose Down
DROP INDEX jobs_dead_kind;
DROP TABLE queue_minute_hours;
DROP TABLE queue_depth_hours;
