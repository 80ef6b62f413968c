-- +goose Up
-- Mirrors Postgres's 00004 (per-minute throughput summed by the reader);
-- SQLite keeps its per-minute throughput table on the write path instead,
-- so nothing changes here.
SELECT 1;

-- +goose Down
SELECT 1;
