-- +goose Up
-- A node that shuts down says so: it is gone at once, not after dead_after.
-- A heartbeat clears it.
ALTER TABLE nodes ADD COLUMN stopped_at INTEGER;

-- +goose Down
ALTER TABLE nodes DROP COLUMN stopped_at;
