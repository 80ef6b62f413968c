-- +goose Up
-- A node that shuts down says so: it is gone at once, not after dead_after.
-- A heartbeat clears it. Adding a nullable column rewrites nothing.
ALTER TABLE nodes ADD COLUMN stopped_at timestamptz;

-- +goose Down
ALTER TABLE nodes DROP COLUMN stopped_at;
