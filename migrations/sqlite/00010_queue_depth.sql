-- +goose Up
-- Each queue's backlog at the start of every minute, sampled by the
-- scheduler (store/sqlite/depth.go) for the queue page's chart: at most
-- store.MaxDepthQueues queues a minute, kept for store.DepthRetention.
-- Keyed by queue first, so a queue's range is one index range; the minute
-- index serves the pruning.
CREATE TABLE queue_depth (
    queue     TEXT    NOT NULL,
    minute    INTEGER NOT NULL, -- Unix minutes
    available INTEGER NOT NULL,
    scheduled INTEGER NOT NULL,
    PRIMARY KEY (queue, minute)
) WITHOUT ROWID;
CREATE INDEX queue_depth_minute ON queue_depth (minute);

-- What finished in each minute per queue and kind (store.KindMinute),
-- rolled up by the scheduler from the jobs that finished in it: counts,
-- and wait and run times as log-bucket histograms ("bucket:count,...").
CREATE TABLE queue_minutes (
    queue     TEXT    NOT NULL,
    minute    INTEGER NOT NULL, -- Unix minutes
    kind      TEXT    NOT NULL,
    succeeded INTEGER NOT NULL,
    dead      INTEGER NOT NULL,
    wait      TEXT    NOT NULL,
    run       TEXT    NOT NULL,
    PRIMARY KEY (queue, minute, kind)
) WITHOUT ROWID;
CREATE INDEX queue_minutes_minute ON queue_minutes (minute);

-- +goose Down
DROP TABLE queue_minutes;
DROP TABLE queue_depth;
