package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// depthRollSQL writes the minute's samples (one row per queue, from
// arrays) and drops expired minutes in one statement: a few hundred rows
// at most.
const depthRollSQL = `WITH written AS (
		INSERT INTO queue_depth (queue, minute, available, scheduled)
		SELECT * FROM unnest($1::text[], array_fill($2::timestamptz, ARRAY[cardinality($1::text[])]),
			$3::bigint[], $4::bigint[])
		ON CONFLICT (queue, minute) DO UPDATE SET available = excluded.available, scheduled = excluded.scheduled
		RETURNING 1
	), dropped AS (
		DELETE FROM queue_depth WHERE (queue, minute) IN (
			SELECT queue, minute FROM queue_depth WHERE minute < $5 LIMIT $6)
		RETURNING 1
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
	var n int
	err := s.lax.QueryRow(ctx, depthRollSQL, queues, p.Now.UTC().Truncate(time.Minute), avail, sched,
		p.Now.Add(-store.DepthRetention), store.DepthPruneBatch).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("roll queue depths: %w", err)
	}
	return n, nil
}

// QueueDepthList reads one range of the primary key, one sample per step.
func (s *Store) QueueDepthList(ctx context.Context, p *store.QueueDepthListParams) ([]store.QueueDepth, error) {
	from := p.Since.UTC().Truncate(time.Minute)
	from = later(from, p.Until.Add(-time.Duration(store.MaxDepthMinutes)*time.Minute))
	// One sample per step: the first of each step's rows by most jobs
	// waiting.
	rows, err := s.pool.Query(ctx, `SELECT minute, available, scheduled FROM (
			SELECT DISTINCT ON (extract(epoch FROM minute)::bigint / (60 * $4::bigint)) minute, available, scheduled
			FROM queue_depth WHERE queue = $1 AND minute >= $2 AND minute < $3
			ORDER BY extract(epoch FROM minute)::bigint / (60 * $4::bigint), available + scheduled DESC, minute) s
		ORDER BY minute`, p.Queue, from, p.Until, p.DepthStepMinutes())
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
