package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// candidate is an available job a limited lease considered.
type candidate struct {
	id       string
	priority int
	runAt    time.Time
	key      *string
}

func candidateOrder(a, b candidate) int {
	return cmp.Or(cmp.Compare(b.priority, a.priority), a.runAt.Compare(b.runAt), cmp.Compare(a.id, b.id))
}

// admitted is what a limited lease decided for one queue.
type admitted struct {
	gate    *store.Gate
	params  store.GateParams
	jobs    []candidate
	keyTATs map[string]int64 // the key rates' states as read
}

// leaseLimited is JobLease for leases naming a queue with limits: the
// leases of the same queues merged while one runs (leaseMergers), in one
// transaction of their own. Each queue's row is taken FOR UPDATE, in name
// order, in a statement of its own before anything is counted: under READ
// COMMITTED every later statement then sees the previous lease of the
// queue committed, so two leases, on any replica, never count the same
// free slot (the over-admission of Hatchet #4778). The running jobs are
// counted from job state (the rows marked limited); candidates pass the
// queue's store.Gate in lease order for the batch's total; the queues'
// admitted jobs merge in lease order, each call taking its share in turn,
// all in one UPDATE; the gates are then replayed over the jobs leased so
// the rate state spends only real starts.
func (s *Store) leaseLimited(ctx context.Context, queues, kinds []string, batch []*leaseCall) {
	if s.leases.before != nil {
		s.leases.before(len(batch))
	}
	var live []*leaseCall
	p := &store.JobLeaseParams{Queues: queues, Kinds: kinds}
	var workers []string
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			continue
		}
		live = append(live, c)
		p.Max += c.max
		if c.now.After(p.Now) {
			p.Now = c.now // the batch leases at its latest instant
		}
		if !slices.Contains(workers, c.worker) {
			workers = append(workers, c.worker)
		}
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := mergedContext(ctx)
	defer cancel()
	var leased []*store.Job
	var byQueue map[string]*admitted
	err := s.tx(ctx, func(tx pgx.Tx) error {
		leased, byQueue = nil, map[string]*admitted{}
		if _, err := tx.Exec(ctx, `INSERT INTO workers (id, started_at, last_heartbeat_at)
			SELECT w, $2, $2 FROM unnest($1::text[]) w
			ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = excluded.last_heartbeat_at`, workers, p.Now); err != nil {
			return fmt.Errorf("touch workers %q: %w", workers, err)
		}
		ordered := slices.Clone(queues)
		slices.Sort(ordered) // one lock order for every lease
		var all []candidate
		for _, q := range ordered {
			a, err := admitQueue(ctx, tx, q, p)
			if err != nil {
				return err
			}
			if a != nil {
				byQueue[q] = a
				all = append(all, a.jobs...)
			}
		}
		slices.SortFunc(all, candidateOrder)
		all = all[:min(len(all), p.Max)]
		if len(all) == 0 {
			return nil
		}
		// Each call takes its share in turn, in lease order.
		ids, owners := make([]string, len(all)), make([]string, len(all))
		k := 0
		for _, c := range live {
			for n := 0; n < c.max && k < len(all); n++ {
				ids[k], owners[k] = all[k].id, c.worker
				k++
			}
		}
		var limited []string
		for q, a := range byQueue {
			if !a.params.Limits.None() {
				limited = append(limited, q)
			}
		}
		rows, err := scanJobs(tx.Query(ctx, `UPDATE jobs SET state = 'running', attempt = attempt + 1, worker_id = b.owner,
			started_at = $3, expires_at = $3::timestamptz + timeout_ms * interval '1 millisecond',
			token = encode(sha256(convert_to((SELECT `+statementKey+`) || id::text, 'UTF8')), 'hex'),
			attempt_id = md5((SELECT `+statementKey+`) || id::text)::uuid,
			limited = queue = ANY($4)
			FROM unnest($1::uuid[], $2::text[]) AS b(picked, owner)
			WHERE id = b.picked RETURNING `+jobColumns, ids, owners, p.Now, limited))
		if err != nil {
			return fmt.Errorf("lease from %q: %w", queues, err)
		}
		leased = leaseOrder(jobs(rows))
		return writeRates(ctx, tx, byQueue, leased)
	})
	if err != nil {
		for _, c := range live {
			c.err = err
		}
		return
	}
	for q, a := range byQueue {
		if at, ok := a.gate.WakeAt(); ok {
			s.wake.SignalAfter(q, at.Sub(p.Now))
		}
	}
	byWorker := map[string][]*store.Job{}
	for _, j := range leased {
		byWorker[j.Lease.WorkerID] = append(byWorker[j.Lease.WorkerID], j)
	}
	for _, c := range live {
		js := byWorker[c.worker]
		n := min(len(js), c.max)
		c.jobs, byWorker[c.worker] = append([]*store.Job{}, js[:n]...), js[n:]
	}
}

// admitQueue takes queue's row and reads its candidates through its gate;
// nil when the queue is paused. A queue without limits (or whose limits
// were cleared meanwhile) passes up to Max.
func admitQueue(ctx context.Context, tx pgx.Tx, queue string, p *store.JobLeaseParams) (*admitted, error) {
	gp, paused, err := lockQueue(ctx, tx, queue, p)
	if err != nil || paused {
		return nil, err
	}
	a := &admitted{gate: store.NewGate(gp), params: gp, keyTATs: map[string]int64{}}
	more, err := a.read(ctx, tx, queue, p.Kinds)
	if err != nil {
		return nil, err
	}
	a.gate.Done(more)
	return a, nil
}

// read walks queue's available jobs in lease order, a page at a time,
// locking them (SKIP LOCKED: an admin change in flight), passing over the
// keys that can start no more, until the gate's budget runs out or the
// jobs do. It reports whether jobs were left unread. Each page excludes
// every key found full so far, so a flood of one key's jobs costs at most
// one page.
func (a *admitted) read(ctx context.Context, tx pgx.Tx, queue string, kinds []string) (more bool, err error) {
	var after *candidate
	held := map[string]bool{} // keys a key rate refused at this instant
	for a.gate.Budget() > 0 {
		page := a.gate.Budget() + 1
		excluded := a.gate.Saturated()
		for k := range held {
			excluded = append(excluded, k)
		}
		query, args := candidateQuery(queue, kinds, excluded, after, page, true)
		// Planned for its queue: a generic plan, estimating an average
		// queue, may sort the queue's whole backlog (see pickSQL).
		rows, err := tx.Query(ctx, query, append([]any{planPerCall}, args...)...)
		if err != nil {
			return false, fmt.Errorf("read candidates of %q: %w", queue, err)
		}
		var c candidate
		cands, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (candidate, error) {
			err := r.Scan(&c.id, &c.priority, &c.runAt, &c.key)
			return c, err
		})
		if err != nil {
			return false, fmt.Errorf("read candidates of %q: %w", queue, err)
		}
		for _, c := range cands {
			if a.gate.Budget() == 0 {
				return true, nil
			}
			if c.key != nil && a.gate.KeyRated() {
				if err := a.keyTAT(ctx, tx, queue, *c.key); err != nil {
					return false, err
				}
			}
			if a.gate.Admit(c.key) {
				a.jobs = append(a.jobs, c)
			} else if c.key != nil {
				held[*c.key] = true
			}
		}
		if len(cands) < page {
			return false, nil
		}
		after = &cands[len(cands)-1]
	}
	// The budget ran out before a page: were there jobs it held back? (A
	// page of one, not EXISTS, which drops the ORDER BY and may then scan
	// the table's history in physical order for the first match.)
	query, args := candidateQuery(queue, kinds, nil, after, 1, false)
	var c candidate
	err = tx.QueryRow(ctx, query, append([]any{planPerCall}, args...)...).Scan(&c.id, &c.priority, &c.runAt, &c.key)
	if isNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("probe candidates of %q: %w", queue, err)
	}
	return true, nil
}

// candidateQuery reads up to page available jobs of queue after the
// candidate after (nil: from the first), in lease order, keys in excluded
// passed over.
func candidateQuery(queue string, kinds, excluded []string, after *candidate, page int, lock bool) (string, []any) {
	var b strings.Builder
	args := []any{queue}
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	b.WriteString(`SELECT id::text, priority, run_at, concurrency_key FROM jobs WHERE state = 'available' AND queue = $1`)
	if len(kinds) > 0 {
		b.WriteString(` AND kind = ANY(` + arg(kinds) + `::text[])`)
	}
	if len(excluded) > 0 {
		b.WriteString(` AND (concurrency_key IS NULL OR concurrency_key <> ALL(` + arg(excluded) + `::text[]))`)
	}
	if after != nil {
		p := arg(after.priority)
		b.WriteString(` AND (priority < ` + p + ` OR (priority = ` + p + ` AND (run_at, id) > (` +
			arg(after.runAt) + `::timestamptz, ` + arg(after.id) + `::uuid)))`)
	}
	// jobs.id, not a bare id: ORDER BY takes a bare name for the output
	// column, here id::text, which no index orders; each lease would then
	// sort the queue's backlog (all of it, with rows of one run_at).
	b.WriteString(` ORDER BY priority DESC, run_at, jobs.id LIMIT ` + arg(page))
	if lock {
		b.WriteString(` FOR UPDATE SKIP LOCKED`)
	}
	return b.String(), args
}

// keyTAT hands the gate a key's rate state, read once per key.
func (a *admitted) keyTAT(ctx context.Context, tx pgx.Tx, queue, key string) error {
	if _, read := a.keyTATs[key]; read {
		return nil
	}
	var tat int64
	err := tx.QueryRow(ctx, `SELECT tat FROM key_rates WHERE queue = $1 AND key = $2`, queue, key).Scan(&tat)
	if err != nil && !isNoRows(err) {
		return fmt.Errorf("read rate of key %q of %q: %w", key, queue, err)
	}
	a.keyTATs[key] = tat
	a.gate.SetKeyTAT(key, tat)
	return nil
}

// writeRates replays each limited queue's gate over the jobs it leased
// (in lease order), writes the rate state they moved, and counts the
// limits that held jobs back.
func writeRates(ctx context.Context, tx pgx.Tx, byQueue map[string]*admitted, leased []*store.Job) error {
	keys := map[string][]*string{}
	for _, j := range leased {
		keys[j.Queue] = append(keys[j.Queue], j.ConcurrencyKey)
	}
	for q, a := range byQueue {
		if a.params.Limits.None() {
			continue
		}
		replay := store.NewGate(a.params)
		for k, tat := range a.keyTATs {
			replay.SetKeyTAT(k, tat)
		}
		for _, k := range keys[q] {
			replay.Admit(k)
		}
		if tat, changed := replay.TAT(); changed {
			if _, err := tx.Exec(ctx, `UPDATE queues SET rate_tat = $2 WHERE name = $1`, q, tat); err != nil {
				return fmt.Errorf("write rate of %q: %w", q, err)
			}
		}
		for k, tat := range replay.KeyTATs() {
			if _, err := tx.Exec(ctx, `INSERT INTO key_rates (queue, key, tat) VALUES ($1, $2, $3)
				ON CONFLICT (queue, key) DO UPDATE SET tat = excluded.tat`, q, k, tat); err != nil {
				return fmt.Errorf("write rate of key %q of %q: %w", k, q, err)
			}
		}
		for _, r := range a.gate.Throttled() {
			if _, err := tx.Exec(ctx, `INSERT INTO queue_throttles (queue, reason, n) VALUES ($1, $2, 1)
				ON CONFLICT (queue, reason) DO UPDATE SET n = queue_throttles.n + 1`, q, string(r)); err != nil {
				return fmt.Errorf("count throttles of %q: %w", q, err)
			}
		}
	}
	return nil
}

// lockQueue takes queue's row and reads what its gate needs, in one round
// trip: the statements of a batch run one after the other, each with a
// snapshot of its own, so the counts, which follow the lock, see every
// lease of the queue that committed before it. Without limits the counts
// go unused; they read a partial index of the limited running rows only.
func lockQueue(ctx context.Context, tx pgx.Tx, queue string, p *store.JobLeaseParams) (gp store.GateParams, paused bool, err error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT limits::text, rate_tat, paused FROM queues WHERE name = $1 FOR UPDATE`, queue)
	b.Queue(`SELECT count(*) FROM jobs WHERE state = 'running' AND limited AND queue = $1`, queue)
	b.Queue(`SELECT concurrency_key, count(*) FROM jobs
		WHERE state = 'running' AND limited AND queue = $1 AND concurrency_key IS NOT NULL
		GROUP BY concurrency_key`, queue)
	res := tx.SendBatch(ctx, b)
	defer res.Close()
	var encoded *string
	gp = store.GateParams{Max: p.Max, Now: p.Now}
	err = res.QueryRow().Scan(&encoded, &gp.TAT, &paused)
	if err != nil && !isNoRows(err) {
		return gp, false, fmt.Errorf("lock queue %q: %w", queue, err)
	}
	if err := res.QueryRow().Scan(&gp.Running); err != nil {
		return gp, false, fmt.Errorf("count running jobs of %q: %w", queue, err)
	}
	rows, err := res.Query()
	if err != nil {
		return gp, false, fmt.Errorf("count running jobs of %q by key: %w", queue, err)
	}
	gp.KeyRunning = map[string]int{}
	var key string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&key, &n}, func() error { gp.KeyRunning[key] = n; return nil }); err != nil {
		return gp, false, fmt.Errorf("count running jobs of %q by key: %w", queue, err)
	}
	if encoded != nil {
		gp.Limits = &store.Limits{}
		if err := json.Unmarshal([]byte(*encoded), gp.Limits); err != nil {
			return gp, false, fmt.Errorf("limits of %q: %w", queue, err)
		}
	}
	return gp, paused, res.Close()
}
