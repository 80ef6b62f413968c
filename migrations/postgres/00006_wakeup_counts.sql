-- +goose Up
-- Wake-ups name how many jobs became leasable as well as the queue
-- ("3:emails", store.WakeupMessage), so each replica wakes about as many of
-- the queue's waiting long-polls as there are jobs, not all of them. A
-- replica from before reads the message as a queue name that none waits on
-- (its waiters then see the jobs at their wait's end); this one reads a
-- bare name, as the old function sent, as "wake every waiter of it".
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_jobs_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    d record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR d IN INSERT INTO queue_count_deltas (queue, state, n)
            SELECT queue, k, count(*) FROM (
                SELECT queue, state AS k FROM new_rows
                UNION ALL
                SELECT queue, 'retrying' FROM new_rows WHERE state = 'scheduled' AND attempt > 0
            ) c GROUP BY queue, k
            RETURNING queue, state, n
        LOOP
            IF d.state = 'available' THEN
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.n || ':' || d.queue);
            END IF;
        END LOOP;
    ELSIF TG_OP = 'UPDATE' THEN
        FOR d IN INSERT INTO queue_count_deltas (queue, state, n)
            SELECT queue, k, sum(n) FROM (
                SELECT queue, state AS k, 1 AS n FROM new_rows
                UNION ALL
                SELECT queue, 'retrying', 1 FROM new_rows WHERE state = 'scheduled' AND attempt > 0
                UNION ALL
                SELECT queue, state, -1 FROM old_rows
                UNION ALL
                SELECT queue, 'retrying', -1 FROM old_rows WHERE state = 'scheduled' AND attempt > 0
            ) c GROUP BY queue, k HAVING sum(n) <> 0
            RETURNING queue, state, n
        LOOP
            IF d.state = 'available' AND d.n > 0 THEN
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.n || ':' || d.queue);
            END IF;
        END LOOP;
    ELSE
        INSERT INTO queue_count_deltas (queue, state, n)
        SELECT queue, k, -count(*) FROM (
            SELECT queue, state AS k FROM old_rows
            UNION ALL
            SELECT queue, 'retrying' FROM old_rows WHERE state = 'scheduled' AND attempt > 0
        ) c GROUP BY queue, k;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_jobs_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    d record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR d IN INSERT INTO queue_count_deltas (queue, state, n)
            SELECT queue, k, count(*) FROM (
                SELECT queue, state AS k FROM new_rows
                UNION ALL
                SELECT queue, 'retrying' FROM new_rows WHERE state = 'scheduled' AND attempt > 0
            ) c GROUP BY queue, k
            RETURNING queue, state, n
        LOOP
            IF d.state = 'available' THEN
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.queue);
            END IF;
        END LOOP;
    ELSIF TG_OP = 'UPDATE' THEN
        FOR d IN INSERT INTO queue_count_deltas (queue, state, n)
            SELECT queue, k, sum(n) FROM (
                SELECT queue, state AS k, 1 AS n FROM new_rows
                UNION ALL
                SELECT queue, 'retrying', 1 FROM new_rows WHERE state = 'scheduled' AND attempt > 0
                UNION ALL
                SELECT queue, state, -1 FROM old_rows
                UNION ALL
                SELECT queue, 'retrying', -1 FROM old_rows WHERE state = 'scheduled' AND attempt > 0
            ) c GROUP BY queue, k HAVING sum(n) <> 0
            RETURNING queue, state, n
        LOOP
            IF d.state = 'available' AND d.n > 0 THEN
                PERFORM pg_notify(tether_channel(TG_TABLE_SCHEMA), d.queue);
            END IF;
        END LOOP;
    ELSE
        INSERT INTO queue_count_deltas (queue, state, n)
        SELECT queue, k, -count(*) FROM (
            SELECT queue, state AS k FROM old_rows
            UNION ALL
            SELECT queue, 'retrying' FROM old_rows WHERE state = 'scheduled' AND attempt > 0
        ) c GROUP BY queue, k;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
