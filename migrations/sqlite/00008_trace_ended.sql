-- +goose Up
-- A job's W3C trace context, stored as the producer gave it; and how its
-- last delivery ended (fail, release, rescue, reap, deregister), which the
-- row keeps with that delivery's token, so that a fail or release repeated
-- under the token that already ended the delivery the same way is answered
-- with the job instead of 409.
ALTER TABLE jobs ADD COLUMN traceparent TEXT;
ALTER TABLE jobs ADD COLUMN tracestate TEXT;
ALTER TABLE jobs ADD COLUMN ended_by TEXT;

-- +goose Down
ALTER TABLE jobs DROP COLUMN ended_by;
ALTER TABLE jobs DROP COLUMN tracestate;
ALTER TABLE jobs DROP COLUMN traceparent;
