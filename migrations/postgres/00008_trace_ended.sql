-- +goose Up
-- A job's W3C trace context, stored as the producer gave it; and how its
-- last delivery ended (fail, release, rescue, reap, deregister), which the
-- row keeps with that delivery's token, so that a fail or release repeated
-- under the token that already ended the delivery the same way is answered
-- with the job instead of 409. Nullable columns without defaults: adding
-- them rewrites nothing, and no index covers them, so ending a delivery
-- stays a HOT update.
ALTER TABLE jobs ADD COLUMN traceparent text, ADD COLUMN tracestate text, ADD COLUMN ended_by text;

-- +goose Down
ALTER TABLE jobs DROP COLUMN ended_by, DROP COLUMN tracestate, DROP COLUMN traceparent;
