-- +goose Up
-- The dead-letter list of one kind, most recently finished first: the
-- dashboard's kind filter reads that kind's dead jobs only, where it read
-- a window of 5,000 dead jobs of every kind and compared each.
CREATE INDEX jobs_dead_kind ON jobs (kind, finished_at, id) WHERE state = 'dead';

-- Postgres also keeps each hour of the per-minute roll-ups summed
-- (postgres/00013), so that a week-long queue page reads 168 rows per
-- chart instead of 10,080. SQLite keeps none: it reads a week of minutes
-- in one grouped statement within the page's budget (35 ms with a week of
-- roll-ups on a loaded machine, docs/benchmarks.md).

-- +goose Down
DROP INDEX jobs_dead_kind;
