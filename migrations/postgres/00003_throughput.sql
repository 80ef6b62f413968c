-- +goose Up
-- Throughput per minute (store.Insights.ThroughputList) is counted from the
-- closed attempts by the minute they finished, not from a shared counter
-- row that every ack would have to lock. This index serves that count; it
-- holds the outcome so the count is an index-only scan. Attempts are
-- appended in time order, so each insert lands at the index's right edge.
CREATE INDEX attempts_finished ON attempts (finished_at, outcome);

-- +goose Down
DROP INDEX attempts_finished;
