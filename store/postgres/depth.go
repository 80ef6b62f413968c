package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// depthRollSQL writes the minute's samples (one row per queue, from
// arrays), rewrites each of those queues' row of the hour from the hour's
// minutes (migration 00013; the statement's parts see the table as it was
// before it, so the minute's new samples are read from the arrays), and
// drops expired minutes and hours, in one statement: a few hundred rows at
// most, and 60 per queue for the hours.
const depthRollSQL = `WITH new AS (
		SELECT * FROM unnest($1::text[], $3::bigint[], $4::bigint[]) AS n (queue, available, scheduled)
	), written AS (
		INSERT INTO queue_depth (queue, minute, available, scheduled)
		SELECT queue, $2::timestamptz, available, scheduled FROM new
		ON CONFLICT (queue, minute) DO UPDATE SET available = excluded.available, scheduled = excluded.scheduled
		RETURNING 1
	), hours AS (
		INSERT INTO queue_depth_hours (queue, hour, minute, available, scheduled)
		SELECT DISTINCT ON (queue) queue, $7::timestamptz, minute, available, scheduled FROM (
			SELECT queue, minute, available, scheduled FROM queue_depth
				WHERE queue = ANY($1::text[]) AND minute >= $7::timestamptz AND minute < $7::timestamptz + interval '1 hour'
					AND minute <> $2::timestamptz
			UNION ALL
			SELECT queue, $2::timestamptz, available, scheduled FROM new
		) m ORDER BY queue, available + scheduled DESC, minute
		ON CONFLICT (queue, hour) DO UPDATE SET minute = excluded.minute, available = excluded.available,
			scheduled = excluded.scheduled
	), dropped AS (
		DELETE FROM queue_depth WHERE (queue, minute) IN (
			SELECT queue, minute FROM queue_depth WHERE minute < $5 LIMIT $6)
		RETURNING 1
	), dropped_hours AS (
		DELETE FROM queue_depth_hours WHERE (queue, hour) IN (
			SELECT queue, hour FROM queue_depth_hours WHERE hour <= $5::timestamptz - interval '1 hour' LIMIT $6)
	)
	SELECT (SELECT count(*) FROM written) + (SELECT count(*) FROM dropped)`

// QueueDepthRoll runs depthRollSQL on the lax pool: a sample lost in a
// crash is a missing minute on a chart.
func (s *Store) QueueDepthRoll(ctx context.Context, p *store.QueueDepthRollParams) (int, error) {
	depths := p.Depths[:min(len(p.Depths), store.MaxDepthQueues)]
	queues := make([]string, len(depths))
	avail, sched := make([]int64, len(depths)), make([]int64, len(depths))
	for i, d := range depths {
		queues[i], avail[i], sched[i] = d.Queue, d.Available, d.Scheduled
	}
	minute := p.Now.UTC().Truncate(time.Minute)
	var n int
	err := s.lax.QueryRow(ctx, depthRollSQL, queues, minute, avail, sched,
		p.Now.Add(-store.DepthRetention), store.DepthPruneBatch, minute.Truncate(time.Hour)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("roll queue depths: %w", err)
	}
	return n, nil
}

// QueueDepthList reads, one sample per step, the hours the range holds
// whole from queue_depth_hours when the step is a whole number of hours,
// and the rest from queue_depth: each one range of a primary key.
func (s *Store) QueueDepthList(ctx context.Context, p *store.QueueDepthListParams) ([]store.QueueDepth, error) {
	from := p.Since.UTC().Truncate(time.Minute)
	from = later(from, p.Until.Add(-time.Duration(store.MaxDepthMinutes)*time.Minute))
	h0, h1 := store.WholeHours(from, p.Until, p.DepthStepMinutes())
	// One sample per step: the first of each step's rows by most jobs
	// waiting.
	rows, err := s.pool.Query(ctx, `SELECT minute, available, scheduled FROM (
			SELECT DISTINCT ON (extract(epoch FROM minute)::bigint / (60 * $4::bigint)) minute, available, scheduled FROM (
				SELECT minute, available, scheduled FROM queue_depth_hours WHERE queue = $1 AND hour >= $5 AND hour < $6
				UNION ALL
				SELECT minute, available, scheduled FROM queue_depth WHERE queue = $1 AND minute >= $2 AND minute < $5
				UNION ALL
				SELECT minute, available, scheduled FROM queue_depth WHERE queue = $1 AND minute >= $6 AND minute < $3
			) r ORDER BY extract(epoch FROM minute)::bigint / (60 * $4::bigint), available + scheduled DESC, minute) s
		ORDER BY minute`, p.Queue, from, p.Until, p.DepthStepMinutes(), h0, h1)
	if err != nil {
		return nil, fmt.Errorf("list the depth of %q: %w", p.Queue, err)
	}
	out := []store.QueueDepth{}
	d := store.QueueDepth{Queue: p.Queue}
	_, err = pgx.ForEachRow(rows, []any{&d.Minute, &d.Available, &d.Scheduled}, func() error {
		d.Minute = d.Minute.UTC()
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the depth of %q: %w", p.Queue, err)
	}
	return out, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
