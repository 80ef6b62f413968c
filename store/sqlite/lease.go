package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tetherq/tether/store"
)

// JobLease claims up to Max jobs with one UPDATE … RETURNING. The candidate
// subquery reads the queues' slices of their partial index in lease order,
// merged, and stops after Max rows in all, so a lease costs O(Max +
// queues), not O(backlog) nor O(Max × queues). A lease naming a queue with
// limits takes leaseLimited's path instead; others keep this one at no
// extra cost, since the writer knows every queue's limits.
func (s *Store) JobLease(ctx context.Context, p *store.JobLeaseParams) ([]*store.Job, error) {
	now := toMS(store.Trunc(p.Now))
	var jobs []*store.Job
	var gated map[string]*admitted // limited leases only
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		jobs, gated = nil, nil
		if err := touchWorker(ctx, tx, p.WorkerID, now); err != nil {
			return false, err
		}
		queues := dedupe(p.Queues)
		if len(queues) == 0 || p.Max <= 0 {
			return false, nil
		}
		var rows []jobRow
		if slices.ContainsFunc(queues, func(q string) bool { return tx.w.limits[q] != nil }) {
			var err error
			if rows, gated, err = s.leaseLimited(ctx, tx, p, queues); err != nil {
				return false, err
			}
		} else {
			query, args := leaseQuery(queues, p.Kinds, p.Max)
			if err := tx.SelectContext(ctx, &rows, query, append([]any{p.WorkerID, now, now}, args...)...); err != nil {
				return false, fmt.Errorf("lease from %v: %w", queues, err)
			}
		}
		for i := range rows {
			tx.moved(rows[i].Queue, store.StateAvailable, store.StateRunning, 1)
			jobs = append(jobs, rows[i].job())
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	s.wakeLater(gated, p.Now)
	// RETURNING gives no order; hand jobs out in lease order.
	slices.SortFunc(jobs, func(a, b *store.Job) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.RunAt.Compare(b.RunAt), cmp.Compare(a.ID, b.ID))
	})
	return jobs, nil
}

// leaseQuery leases from queues (distinct) in one statement. Each queue
// is one arm of a compound SELECT reading that queue's slice of
// jobs_available in lease order; the compound's own ORDER BY and LIMIT
// make SQLite merge the arms (MERGE (UNION ALL) in the plan), so it reads
// about max entries in all, however many queues are named. (Arms with a
// LIMIT of their own, sorted again outside, read and sorted max entries
// per queue.) An arm whose queue is paused is empty: a primary-key probe
// of queues that SQLite runs once per arm, in the same statement rather
// than a read of its own before it. The text depends on the number of
// queues and kinds only, so the writer's statement cache holds it.
func leaseQuery(queues, kinds []string, max int) (string, []any) {
	kindFilter := ""
	var kindArgs []any
	if len(kinds) > 0 {
		kindFilter = " AND kind IN (" + marks(len(kinds)) + ")"
		for _, k := range kinds {
			kindArgs = append(kindArgs, k)
		}
	}
	arms := make([]string, len(queues))
	var args []any
	for i, q := range queues {
		arms[i] = `SELECT id, priority, run_at FROM jobs WHERE state = 'available' AND queue = ?` + kindFilter +
			` AND NOT EXISTS (SELECT 1 FROM queues WHERE name = ? AND paused = 1)`
		args = append(args, q)
		args = append(args, kindArgs...)
		args = append(args, q)
	}
	args = append(args, max)
	return `UPDATE jobs SET state = 'running', attempt = attempt + 1, worker_id = ?,
		token = lower(hex(randomblob(16))), attempt_id = lower(hex(randomblob(16))),
		started_at = ?, expires_at = ? + timeout_ms
		WHERE id IN (SELECT id FROM (` + strings.Join(arms, " UNION ALL ") + `
			ORDER BY priority DESC, run_at, id LIMIT ?))
		RETURNING ` + jobColumns, args
}

// touchWorker records a sign of life, registering an unknown worker.
func touchWorker(ctx context.Context, tx *txn, id string, now int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO workers (id, started_at, last_heartbeat_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = excluded.last_heartbeat_at`, id, now, now)
	if err != nil {
		return fmt.Errorf("touch worker %q: %w", id, err)
	}
	return nil
}

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func dedupe(v []string) []string {
	out := make([]string, 0, len(v))
	for _, s := range v {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
