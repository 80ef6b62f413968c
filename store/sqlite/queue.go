package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/tetherq/tether/store"
)

// CountFold has nothing to fold: every write moves its queue counts in
// the same transaction (txn.moved), so queue_counts is always current.
func (s *Store) CountFold(context.Context, *store.CountFoldParams) (int, error) { return 0, nil }

// QueueList reads the counts every write keeps (txn.moved), so it never
// scans jobs.
func (s *Store) QueueList(ctx context.Context, _ *store.QueueListParams) ([]*store.Queue, error) {
	var counts []struct {
		Queue string `db:"queue"`
		State string `db:"state"`
		N     int64  `db:"n"`
	}
	if err := s.r.SelectContext(ctx, &counts, `SELECT queue, state, n FROM queue_counts`); err != nil {
		return nil, fmt.Errorf("read queue counts: %w", err)
	}
	var paused []string
	if err := s.r.SelectContext(ctx, &paused, `SELECT name FROM queues WHERE paused = 1`); err != nil {
		return nil, fmt.Errorf("read paused queues: %w", err)
	}
	byName := map[string]*store.Queue{}
	get := func(name string) *store.Queue {
		if q, ok := byName[name]; ok {
			return q
		}
		q := &store.Queue{Name: name, Counts: store.ZeroCounts()}
		byName[name] = q
		return q
	}
	for _, c := range counts {
		if c.N != 0 {
			get(c.Queue).Counts[store.State(c.State)] = c.N
		}
	}
	for _, name := range paused {
		get(name).Paused = true
	}
	if err := s.queueLimits(ctx, byName, get); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	return s.fillQueues(ctx, byName, names)
}

// fillQueues adds the retrying count and the oldest available job to each
// queue; both come from the partial indexes of waiting jobs.
func (s *Store) fillQueues(ctx context.Context, byName map[string]*store.Queue, names []string) ([]*store.Queue, error) {
	var retrying []struct {
		Queue string `db:"queue"`
		N     int64  `db:"n"`
	}
	// The partial index holds only retrying jobs; without it the planner
	// would count through every scheduled job.
	if err := s.r.SelectContext(ctx, &retrying, `SELECT queue, count(*) AS n FROM jobs INDEXED BY jobs_retrying_queue
		WHERE state = 'scheduled' AND attempt > 0 GROUP BY queue`); err != nil {
		return nil, fmt.Errorf("count retrying jobs: %w", err)
	}
	for _, r := range retrying {
		if q, ok := byName[r.Queue]; ok {
			q.Retrying = r.N
		}
	}
	slices.Sort(names)
	out := make([]*store.Queue, 0, len(names))
	for _, name := range names {
		q := byName[name]
		if q.Counts[store.StateAvailable] > 0 {
			var oldest sql.NullInt64
			if err := s.r.GetContext(ctx, &oldest, oldestSQL, name); err != nil {
				return nil, fmt.Errorf("oldest job of %q: %w", name, err)
			}
			q.OldestAvailableAt = timePtr(oldest)
		}
		out = append(out, q)
	}
	return out, nil
}

// oldestSQL is the run_at of the oldest available job of queue ?1. The
// index jobs_available orders by priority first, so it walks the distinct
// priorities (a loose index scan: one probe each) and takes the first
// run_at of each: O(priorities), not O(backlog). Left to itself the
// planner reads every available job of every queue through jobs_state_id.
const oldestSQL = `WITH RECURSIVE prio(p) AS (
		SELECT (SELECT priority FROM jobs INDEXED BY jobs_available WHERE state = 'available' AND queue = ?1
			ORDER BY priority DESC LIMIT 1)
		UNION ALL
		SELECT (SELECT priority FROM jobs INDEXED BY jobs_available WHERE state = 'available' AND queue = ?1
			AND priority < prio.p ORDER BY priority DESC LIMIT 1)
		FROM prio WHERE prio.p IS NOT NULL
	)
	SELECT min((SELECT run_at FROM jobs INDEXED BY jobs_available WHERE state = 'available' AND queue = ?1
		AND priority = prio.p ORDER BY run_at LIMIT 1))
	FROM prio WHERE prio.p IS NOT NULL`

// QueueSetPaused pauses or resumes a queue; resuming wakes leasers.
func (s *Store) QueueSetPaused(ctx context.Context, p *store.QueueSetPausedParams) (*store.Queue, error) {
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO queues (name, paused) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET paused = excluded.paused`, p.Name, p.Paused)
		if err != nil {
			return false, fmt.Errorf("set %q paused=%v: %w", p.Name, p.Paused, err)
		}
		if !p.Paused {
			tx.resume(p.Name)
		}
		return !p.Paused, nil
	})
	if err != nil {
		return nil, err
	}
	queues, err := s.QueueList(ctx, &store.QueueListParams{Now: p.Now})
	if err != nil {
		return nil, err
	}
	return store.QueueNamed(queues, p.Name, p.Paused), nil
}

// StatsGet sums the maintained counts.
func (s *Store) StatsGet(ctx context.Context, _ *store.StatsGetParams) (*store.Stats, error) {
	var counts []struct {
		State string `db:"state"`
		N     int64  `db:"n"`
	}
	if err := s.r.SelectContext(ctx, &counts, `SELECT state, sum(n) AS n FROM queue_counts GROUP BY state`); err != nil {
		return nil, fmt.Errorf("read counts: %w", err)
	}
	st := &store.Stats{Jobs: store.ZeroCounts()}
	for _, c := range counts {
		st.Jobs[store.State(c.State)] = c.N
	}
	var rescues sql.NullInt64
	if err := s.r.GetContext(ctx, &rescues, `SELECT value FROM counters WHERE name = 'rescues_total'`); err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("read rescues: %w", err)
	}
	st.RescuesTotal = rescues.Int64
	return st, nil
}
