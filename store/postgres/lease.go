package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// JobLease claims up to Max jobs in one statement: it records the worker's
// sign of life, picks candidates with FOR UPDATE SKIP LOCKED (so concurrent
// leasers on any replica skip each other's rows instead of waiting) and
// moves them to running. Each queue's candidates come from its own scan of
// jobs_available in lease order, stopping after Max rows, so a lease costs
// O(Max × queues) however long the backlog or the finished history.
//
// The candidates are collected into an array (id = ANY(ARRAY(…))) rather
// than matched with IN (subquery), which pins the update to primary-key
// lookups: for a large Max the planner would hash-join the whole table.
//
// Leases of the same queues that arrive while one runs go out together in
// the next statement (leaseMergers). A lease commits without waiting for
// the WAL flush (see Store.lax).
func (s *Store) JobLease(ctx context.Context, p *store.JobLeaseParams) ([]*store.Job, error) {
	now := store.Trunc(p.Now)
	queues := dedupe(p.Queues)
	if len(queues) == 0 || p.Max <= 0 {
		if err := s.touchWorker(ctx, p.WorkerID, now); err != nil {
			return nil, err
		}
		return []*store.Job{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err // a merged lease runs on a context of its own
	}
	limited, err := s.anyLimited(ctx, queues)
	if err != nil {
		return nil, err
	}
	c := &leaseCall{ctx: ctx, worker: p.WorkerID, max: p.Max, now: now}
	if limited {
		// A merger of its own: a batch must not mix the two paths.
		s.leases.lease("limited\x02"+leaseKey(queues, p.Kinds), c, func(batch []*leaseCall) {
			s.leaseLimited(ctx, queues, p.Kinds, batch)
		})
		return c.jobs, c.err
	}
	s.leases.lease(leaseKey(queues, p.Kinds), c, func(batch []*leaseCall) {
		s.leaseMerged(ctx, queues, p.Kinds, batch)
	})
	return c.jobs, c.err
}

// leaseOne leases up to max jobs for worker alone.
func (s *Store) leaseOne(ctx context.Context, worker string, now time.Time, queues, kinds []string, max int) ([]*store.Job, error) {
	args := []any{worker, now, queues, max}
	if len(kinds) > 0 {
		args = append(args, kinds)
	}
	rows, err := scanJobs(s.lax.Query(ctx, leaseQuery(len(queues), len(kinds) > 0), args...))
	if err != nil {
		return nil, fmt.Errorf("lease from %q: %w", queues, err)
	}
	return leaseOrder(jobs(rows)), nil
}

// leaseQuery is the lease statement for the given number of (distinct)
// queues. Its parameters: $1 worker, $2 now, $3 queues, $4 max, $5 kinds
// (only when filtering by kind).
func leaseQuery(queues int, byKind bool) string {
	kinds := ""
	if byKind {
		kinds = "$5"
	}
	return `WITH worker AS (` + touchWorkerSQL + `)
	UPDATE jobs SET state = 'running', attempt = attempt + 1, worker_id = $1, started_at = $2,
		expires_at = $2::timestamptz + timeout_ms * interval '1 millisecond',
		token = encode(sha256(convert_to((SELECT ` + statementKey + `) || id::text, 'UTF8')), 'hex'),
		attempt_id = md5((SELECT ` + statementKey + `) || id::text)::uuid
	WHERE id = ANY(ARRAY(` + pickSQL(queues, kinds) + `))
	RETURNING ` + jobColumns
}

// pickSQL selects and locks up to $4 leasable jobs of the first queues of
// $3 (of the kinds in parameter kinds, unless it is empty), in lease
// order. A queue with limits has none leasable here: only leaseLimited
// takes its jobs, under its lock (the same probe as paused, so queues
// without limits pay nothing for it).
//
// One queue reads its index directly. Several are one scan per queue,
// each naming its queue as ($3::text[])[i], merged by the outer ORDER BY:
// Postgres 15 cannot read one index in order across an IN list. A
// LATERAL join over unnest($3) made each scan's queue a join parameter,
// which the planner estimates as an average queue's rows (the table over
// its distinct queues): with many small queues that is below $4, and both
// its custom and its generic plan read every available job of each named
// queue through jobs_queue_id and sorted them (EXPLAIN ANALYZE, 10 queues
// of 2,000 jobs among 1,000: 13-17 ms, against 1.7 ms now). ($3::text[])[i]
// is a constant to a custom plan, estimated from that queue's own
// statistics. The text depends on the number of queues, so pgx's
// statement cache holds one per count in use. The rows a queue locked
// beyond the outer LIMIT stay unleased; concurrent leasers skip them until
// commit. (Locking only the rows the merge takes is not to be had: a
// locking scan keeps no order Postgres can merge, so each queue locks up
// to $4.)
func pickSQL(queues int, kinds string) string {
	kind := ""
	if kinds != "" {
		kind = ` AND kind = ANY(` + kinds + `::text[])`
	}
	scan := func(columns string, i int) string {
		q := fmt.Sprintf("($3::text[])[%d]", i)
		return `SELECT ` + columns + ` FROM jobs WHERE state = 'available' AND queue = ` + q + kind + `
		AND NOT EXISTS (SELECT 1 FROM queues WHERE name = ` + q + ` AND (paused OR limits IS NOT NULL))
		ORDER BY priority DESC, run_at, id LIMIT $4 FOR UPDATE SKIP LOCKED`
	}
	if queues <= 1 {
		return scan("id", 1)
	}
	scans := make([]string, queues)
	for i := range scans {
		scans[i] = fmt.Sprintf("SELECT * FROM (%s) q%d", scan("id, priority, run_at", i+1), i+1)
	}
	return `SELECT id FROM (` + strings.Join(scans, "\n\tUNION ALL ") + `) c
		ORDER BY priority DESC, run_at, id LIMIT $4`
}

// statementKey is 244 random bits from Postgres's strong random source,
// drawn once per statement (an uncorrelated subquery is evaluated once).
// A lease derives each job's token as sha256(key ‖ id): 64 hex digits,
// unpredictable and never repeated, at a fifth of the cost of drawing
// fresh random bits per row, which was half the lease's CPU time. The
// attempt id is derived the same way from a second key.
const statementKey = `gen_random_uuid()::text || gen_random_uuid()::text`

// touchWorkerSQL records a sign of life of worker $1 at $2, registering an
// unknown worker. The row is rewritten in place (HOT): no index covers
// last_heartbeat_at.
const touchWorkerSQL = `INSERT INTO workers (id, started_at, last_heartbeat_at) VALUES ($1, $2, $2)
	ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = excluded.last_heartbeat_at`

func (s *Store) touchWorker(ctx context.Context, id string, now time.Time) error {
	if _, err := s.lax.Exec(ctx, touchWorkerSQL, id, now); err != nil {
		return fmt.Errorf("touch worker %q: %w", id, err)
	}
	return nil
}

func dedupe(v []string) []string {
	out := make([]string, 0, len(v))
	for _, s := range v {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
