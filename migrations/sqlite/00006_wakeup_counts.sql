-- +goose Up
-- Mirrors Postgres's 00006 (wake-up messages that count the jobs): SQLite
-- wakes its long-polls in process, from each transaction's counts, so
-- nothing changes here.
SELECT 1;

-- +goose Down
SELECT 1;
