package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// countsSQL sums the folded counts and the deltas not folded yet. Both are
// read in one snapshot and a fold moves deltas atomically, so the sums are
// exact at that snapshot. 'retrying' is a pseudo-state the triggers keep:
// the scheduled jobs with attempt > 0.
const countsSQL = `SELECT queue, state, sum(n)::bigint AS n FROM (
		SELECT queue, state, n FROM queue_counts
		UNION ALL
		SELECT queue, state, n FROM queue_count_deltas
	) c GROUP BY queue, state`

// CountFold moves the count deltas that the jobs triggers write into
// queue_counts, in one statement, and returns how many it moved. The
// advisory lock (keyed by the deltas table, so per schema) lets one node
// fold at a time; the others skip the fold instead of queueing.
func (s *Store) CountFold(ctx context.Context, _ *store.CountFoldParams) (int, error) {
	var n int
	err := s.lax.QueryRow(ctx, `WITH lock AS (
			SELECT pg_try_advisory_xact_lock('queue_count_deltas'::regclass::oid::bigint) AS held
		), d AS (
			DELETE FROM queue_count_deltas WHERE (SELECT held FROM lock) RETURNING queue, state, n
		), folded AS (
			INSERT INTO queue_counts (queue, state, n)
			SELECT queue, state, sum(n) FROM d GROUP BY queue, state ORDER BY queue, state
			ON CONFLICT (queue, state) DO UPDATE SET n = queue_counts.n + excluded.n
		)
		SELECT count(*) FROM d`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("fold queue counts: %w", err)
	}
	return n, nil
}

// QueueList reads the maintained counts, so it never scans jobs; the
// oldest available job of each queue comes from jobs_available.
func (s *Store) QueueList(ctx context.Context, _ *store.QueueListParams) ([]*store.Queue, error) {
	byName := map[string]*store.Queue{}
	get := func(name string) *store.Queue {
		if q, ok := byName[name]; ok {
			return q
		}
		q := &store.Queue{Name: name, Counts: store.ZeroCounts()}
		byName[name] = q
		return q
	}
	rows, err := s.pool.Query(ctx, countsSQL)
	if err != nil {
		return nil, fmt.Errorf("read queue counts: %w", err)
	}
	var name, state string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&name, &state, &n}, func() error {
		switch {
		case n == 0:
		case state == "retrying":
			get(name).Retrying = n
		default:
			get(name).Counts[store.State(state)] = n
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read queue counts: %w", err)
	}
	paused, err := collectStrings(s.pool.Query(ctx, `SELECT name FROM queues WHERE paused`))
	if err != nil {
		return nil, fmt.Errorf("read paused queues: %w", err)
	}
	for _, name := range paused {
		get(name).Paused = true
	}
	if err := s.queueLimits(ctx, byName, get); err != nil {
		return nil, err
	}
	out := make([]*store.Queue, 0, len(byName))
	for _, q := range byName {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b *store.Queue) int { return strings.Compare(a.Name, b.Name) })
	return out, s.fillOldest(ctx, out)
}

// oldestSQL is the run_at of the oldest available job of queue $1. The
// index orders by priority first, so it walks the distinct priorities
// (a loose index scan: one probe each) and takes the first run_at of each:
// O(priorities), not O(backlog).
const oldestSQL = `WITH RECURSIVE prio AS (
		(SELECT priority FROM jobs WHERE state = 'available' AND queue = $1 ORDER BY priority DESC LIMIT 1)
		UNION ALL
		SELECT (SELECT j.priority FROM jobs j WHERE j.state = 'available' AND j.queue = $1
			AND j.priority < prio.priority ORDER BY j.priority DESC LIMIT 1)
		FROM prio WHERE prio.priority IS NOT NULL
	)
	SELECT min((SELECT j.run_at FROM jobs j WHERE j.state = 'available' AND j.queue = $1
		AND j.priority = prio.priority ORDER BY j.run_at LIMIT 1))
	FROM prio WHERE prio.priority IS NOT NULL`

// fillOldest sets OldestAvailableAt of the queues with available jobs, in
// one round trip.
func (s *Store) fillOldest(ctx context.Context, queues []*store.Queue) error {
	b := &pgx.Batch{}
	var asked []*store.Queue
	for _, q := range queues {
		if q.Counts[store.StateAvailable] > 0 {
			b.Queue(oldestSQL, q.Name)
			asked = append(asked, q)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	res := s.pool.SendBatch(ctx, b)
	defer res.Close()
	for _, q := range asked {
		var oldest *time.Time
		if err := res.QueryRow().Scan(&oldest); err != nil {
			return fmt.Errorf("oldest job of %q: %w", q.Name, err)
		}
		q.OldestAvailableAt = utc(oldest)
	}
	return res.Close()
}

// QueueSetPaused pauses or resumes a queue; resuming wakes leasers on
// every replica.
func (s *Store) QueueSetPaused(ctx context.Context, p *store.QueueSetPausedParams) (*store.Queue, error) {
	_, err := s.pool.Exec(ctx, `WITH q AS (
			INSERT INTO queues (name, paused) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET paused = excluded.paused RETURNING name, paused
		)
		SELECT CASE WHEN NOT paused THEN pg_notify($3, '0:' || name) END FROM q`, p.Name, p.Paused, s.channel)
	if err != nil {
		return nil, fmt.Errorf("set %q paused=%v: %w", p.Name, p.Paused, err)
	}
	queues, err := s.QueueList(ctx, &store.QueueListParams{Now: p.Now})
	if err != nil {
		return nil, err
	}
	return store.QueueNamed(queues, p.Name, p.Paused), nil
}

// StatsGet sums the maintained counts.
func (s *Store) StatsGet(ctx context.Context, _ *store.StatsGetParams) (*store.Stats, error) {
	st := &store.Stats{Jobs: store.ZeroCounts()}
	rows, err := s.pool.Query(ctx, `SELECT state, sum(n)::bigint FROM (`+countsSQL+`) c
		WHERE state <> 'retrying' GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("read counts: %w", err)
	}
	var state string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error {
		st.Jobs[store.State(state)] = n
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read counts: %w", err)
	}
	err = s.pool.QueryRow(ctx, `SELECT coalesce((SELECT value FROM counters WHERE name = 'rescues_total'), 0)`).
		Scan(&st.RescuesTotal)
	if err != nil {
		return nil, fmt.Errorf("read rescues: %w", err)
	}
	return st, nil
}
