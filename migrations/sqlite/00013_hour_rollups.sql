-- +goose Up
-- Postgres keeps each hour of the per-minute roll-ups summed in tables of
-- its own (postgres/00013), so that a week-long queue page reads 168 rows
-- per queue instead of 10,080. SQLite reads a week of minutes in one
-- grouped statement within the page's budget (35 ms with a week of
-- roll-ups on a loaded machine, docs/benchmarks.md), so it keeps none;
-- this version only keeps the two dialects' versions alike.
SELECT 1;

-- +goose Down
SELECT 1;
