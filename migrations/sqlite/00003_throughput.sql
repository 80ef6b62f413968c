-- +goose Up
-- Mirrors Postgres's 00003 (an index for counting throughput from the
-- attempts); SQLite keeps its per-minute throughput table instead, so
-- nothing changes here.
SELECT 1;

-- +goose Down
SELECT 1;
