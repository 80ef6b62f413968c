-- +goose Up
-- Throughput per minute, summed once for each minute that can no longer
-- change (store/postgres/throughput.go): counting a busy hour's attempts
-- on every read of the dashboard costs a second at a million attempts an
-- hour. The scheduler's tick (JobPromote) writes these rows, never the
-- write path, so acks lock nothing new. Only the last minute or two are
-- still counted from the attempts on each read.
CREATE TABLE throughput_minutes (
    minute    timestamptz PRIMARY KEY,
    succeeded bigint NOT NULL,
    failed    bigint NOT NULL,
    rescued   bigint NOT NULL
);

-- +goose Down
DROP TABLE throughput_minutes;
