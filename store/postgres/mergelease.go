package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetherq/tether/store"
)

// leaseCall is one caller's lease and what it got.
type leaseCall struct {
	ctx    context.Context
	worker string
	max    int
	now    time.Time
	jobs   []*store.Job
	err    error
}

// leaseMergers merges the leases of the same queues and kinds that arrive
// while one runs (see merger): concurrent workers of a queue then take
// their batches in one statement instead of skipping past each other's
// locked rows in several.
type leaseMergers struct {
	mu     sync.Mutex
	m      map[string]*leaseMerger // by leaseKey, while in use
	before func(calls int)         // called before each batch runs (tests)
}

type leaseMerger struct {
	merger[*leaseCall]
	users int
}

// leaseKey names the queues and kinds a lease reads.
func leaseKey(queues, kinds []string) string {
	return strings.Join(queues, "\x00") + "\x01" + strings.Join(kinds, "\x00")
}

// lease runs c in the merger of key, alone or merged with others.
func (g *leaseMergers) lease(key string, c *leaseCall, run func([]*leaseCall)) {
	g.mu.Lock()
	if g.m == nil {
		g.m = map[string]*leaseMerger{}
	}
	lg := g.m[key]
	if lg == nil {
		lg = &leaseMerger{}
		g.m[key] = lg
	}
	lg.users++
	g.mu.Unlock()
	lg.do(c, run)
	g.mu.Lock()
	if lg.users--; lg.users == 0 {
		delete(g.m, key)
	}
	g.mu.Unlock()
}

// leaseMerged leases for every call of batch whose caller still waits: one
// alone runs the single-worker statement, several the merged one.
func (s *Store) leaseMerged(ctx context.Context, queues, kinds []string, batch []*leaseCall) {
	if s.leases.before != nil {
		s.leases.before(len(batch))
	}
	var live []*leaseCall
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			continue
		}
		live = append(live, c)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		c := live[0]
		c.jobs, c.err = s.leaseOne(c.ctx, c.worker, c.now, queues, kinds, c.max)
		return
	}
	workers, ats, bounds := make([]string, len(live)), make([]time.Time, len(live)), make([]int32, len(live))
	total := 0
	for i, c := range live {
		total += c.max
		workers[i], ats[i], bounds[i] = c.worker, c.now, int32(total)
	}
	args := []any{workers, ats, queues, total, bounds}
	if len(kinds) > 0 {
		args = append(args, kinds)
	}
	mctx, cancel := mergedContext(ctx)
	defer cancel()
	rows, err := scanJobs(s.lax.Query(mctx, leaseManyQuery(len(queues), len(kinds) > 0), args...))
	if err != nil {
		for _, c := range live {
			c.err = fmt.Errorf("lease from %q: %w", queues, err)
		}
		return
	}
	// The statement gave each call its share under its worker's name; a
	// worker with two calls in the batch has both shares, split here.
	byWorker := map[string][]*store.Job{}
	for _, j := range leaseOrder(jobs(rows)) {
		byWorker[j.Lease.WorkerID] = append(byWorker[j.Lease.WorkerID], j)
	}
	for _, c := range live {
		js := byWorker[c.worker]
		n := min(len(js), c.max)
		c.jobs, byWorker[c.worker] = append([]*store.Job{}, js[:n]...), js[n:]
	}
}

// leaseOrder sorts leased jobs in lease order (RETURNING gives none).
func leaseOrder(leased []*store.Job) []*store.Job {
	slices.SortFunc(leased, func(a, b *store.Job) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.RunAt.Compare(b.RunAt), cmp.Compare(a.ID, b.ID))
	})
	return leased
}

// leaseManyQuery leases for several calls in one statement. Its
// parameters: $1 each call's worker, $2 each call's instant, $3 queues, $4
// the calls' total max, $5 each call's running total of max (the last
// position in lease order that is its), $6 kinds (only when filtering by
// kind). The picked jobs are numbered in lease order and each goes to the
// first call whose running total reaches its number, so every call gets at
// most its max and the first calls the first jobs. Every worker is
// touched, as a lease of its own would.
func leaseManyQuery(queues int, byKind bool) string {
	kinds := ""
	if byKind {
		kinds = "$6"
	}
	return `WITH worker AS (
		INSERT INTO workers (id, started_at, last_heartbeat_at)
		SELECT DISTINCT ON (id) id, at, at FROM unnest($1::text[], $2::timestamptz[]) AS w(id, at)
		ORDER BY id, at DESC
		ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = excluded.last_heartbeat_at
	), picked AS MATERIALIZED (
		SELECT ARRAY(` + pickSQL(queues, kinds) + `) AS ids
	), slot AS (
		SELECT u.jid, (SELECT min(c.k) FROM unnest($5::int[]) WITH ORDINALITY AS c(hi, k) WHERE c.hi >= u.pos) AS k
		FROM picked, unnest(picked.ids) WITH ORDINALITY AS u(jid, pos)
	)
	UPDATE jobs SET state = 'running', attempt = attempt + 1, worker_id = ($1::text[])[slot.k],
		started_at = ($2::timestamptz[])[slot.k],
		expires_at = ($2::timestamptz[])[slot.k] + timeout_ms * interval '1 millisecond',
		token = encode(sha256(convert_to((SELECT ` + statementKey + `) || id::text, 'UTF8')), 'hex'),
		attempt_id = md5((SELECT ` + statementKey + `) || id::text)::uuid
	FROM slot
	WHERE jobs.id = slot.jid AND jobs.id = ANY((SELECT ids FROM picked)::uuid[])
	RETURNING ` + jobColumns
}
