-- +goose Up
-- Each queue's backlog at the start of every minute, sampled by the
-- scheduler (store/postgres/depth.go) for the queue page's chart: at most
-- store.MaxDepthQueues queues a minute, kept for store.DepthRetention.
-- Keyed by queue first, so a queue's range is one index range; the minute
-- index serves the pruning.
CREATE TABLE queue_depth (
    queue     text        NOT NULL,
    minute    timestamptz NOT NULL,
    available bigint      NOT NULL,
    scheduled bigint      NOT NULL,
    PRIMARY KEY (queue, minute)
);
CREATE INDEX queue_depth_minute ON queue_depth (minute);

-- What finished in each minute per queue and kind (store.KindMinute),
-- rolled up by the scheduler from the jobs that finished in it: counts,
-- and wait and run times as log-bucket histograms ("bucket:count,...").
CREATE TABLE queue_minutes (
    queue     text        NOT NULL,
    minute    timestamptz NOT NULL,
    kind      text        NOT NULL,
    succeeded bigint      NOT NULL,
    dead      bigint      NOT NULL,
    wait      text        NOT NULL,
    run       text        NOT NULL,
    PRIMARY KEY (queue, minute, kind)
);
CREATE INDEX queue_minutes_minute ON queue_minutes (minute);

-- +goose Down
DROP TABLE queue_minutes;
DROP TABLE queue_depth;
