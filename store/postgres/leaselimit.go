package postgres

import (
	"bytes"
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
	queue string
	// id is the job's uuid as its 16 bytes, which pgx sends and reads in
	// binary; as text, or as a uuid.UUID (a driver.Valuer, so pgx encodes
	// its text), the update's 100 ids took a tenth of the lease's CPU.
	id       [16]byte
	priority int
	runAt    time.Time
	key      *string
}

func candidateOrder(a, b candidate) int {
	return cmp.Or(cmp.Compare(b.priority, a.priority), a.runAt.Compare(b.runAt), bytes.Compare(a.id[:], b.id[:]))
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
// all in one UPDATE; the gates are then replayed over the jobs started so
// the rate state spends only real starts.
//
// The transaction is three round trips (pipeTx): the begin, the workers'
// sign of life and each queue's lock and counts; the candidates (a page
// per queue, more only when a key's flood fills one); the update, the
// rate state, the throttle counts and the commit.
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
	err := s.pipeTx(ctx, func(conn *pgx.Conn) error {
		var err error
		if byQueue, err = admitQueues(ctx, conn, workers, p); err != nil {
			return err
		}
		leased, err = startAdmitted(ctx, conn, byQueue, live, p)
		return err
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

// admitQueues begins the lease's transaction on conn and admits each
// queue's candidates through its gate, a queue without limits (or whose
// limits were cleared meanwhile) up to Max; a paused queue is left out.
// The begin, the workers' sign of life and every queue's lock and counts
// go out in one batch (lockQueue), the queues in name order: one lock
// order for every lease.
func admitQueues(ctx context.Context, conn *pgx.Conn, workers []string, p *store.JobLeaseParams) (map[string]*admitted, error) {
	ordered := slices.Clone(p.Queues)
	slices.Sort(ordered)
	b := &pgx.Batch{}
	b.Queue(`begin`)
	b.Queue(`INSERT INTO workers (id, started_at, last_heartbeat_at)
		SELECT w, $2, $2 FROM unnest($1::text[]) w
		ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = excluded.last_heartbeat_at`, workers, p.Now)
	for _, q := range ordered {
		queueLock(b, q)
	}
	res := conn.SendBatch(ctx, b)
	defer res.Close()
	if _, err := res.Exec(); err != nil {
		return nil, fmt.Errorf("begin a lease of %q: %w", p.Queues, err)
	}
	if _, err := res.Exec(); err != nil {
		return nil, fmt.Errorf("touch workers %q: %w", workers, err)
	}
	gps, paused := make([]store.GateParams, len(ordered)), make([]bool, len(ordered))
	for i, q := range ordered {
		var err error
		if gps[i], paused[i], err = lockQueue(res, q, p); err != nil {
			return nil, err
		}
	}
	if err := res.Close(); err != nil {
		return nil, fmt.Errorf("lock queues %q: %w", ordered, err)
	}
	byQueue := map[string]*admitted{}
	for i, q := range ordered {
		if paused[i] {
			continue
		}
		a := &admitted{gate: store.NewGate(gps[i]), params: gps[i], keyTATs: map[string]int64{}}
		more, err := a.read(ctx, conn, q, p.Kinds)
		if err != nil {
			return nil, err
		}
		a.gate.Done(more)
		byQueue[q] = a
	}
	return byQueue, nil
}

// startAdmitted starts the admitted jobs and commits, in one batch: the
// queues' admitted jobs merge in lease order and each call of live takes
// its share in turn, all in one UPDATE; the rate state their starts moved
// and the throttle counts follow, then the commit. The rates are replayed
// over the jobs picked rather than over those the update returns, which
// it cannot wait for: every picked row is locked by this transaction
// since it was read available, so the update starts every one of them.
func startAdmitted(ctx context.Context, conn *pgx.Conn, byQueue map[string]*admitted, live []*leaseCall, p *store.JobLeaseParams) ([]*store.Job, error) {
	var all []candidate
	var limited []string
	for q, a := range byQueue {
		all = append(all, a.jobs...)
		if !a.params.Limits.None() {
			limited = append(limited, q)
		}
	}
	slices.SortFunc(all, candidateOrder)
	all = all[:min(len(all), p.Max)]
	b := &pgx.Batch{}
	if len(all) > 0 {
		// Each call takes its share in turn, in lease order.
		ids, owners := make([][16]byte, len(all)), make([]string, len(all))
		k := 0
		for _, c := range live {
			for n := 0; n < c.max && k < len(all); n++ {
				ids[k], owners[k] = all[k].id, c.worker
				k++
			}
		}
		b.Queue(`UPDATE jobs SET state = 'running', attempt = attempt + 1, worker_id = b.owner,
			started_at = $3, expires_at = $3::timestamptz + timeout_ms * interval '1 millisecond',
			token = encode(sha256(convert_to((SELECT `+statementKey+`) || id::text, 'UTF8')), 'hex'),
			attempt_id = md5((SELECT `+statementKey+`) || id::text)::uuid,
			limited = queue = ANY($4)
			FROM unnest($1::uuid[], $2::text[]) AS b(picked, owner)
			WHERE id = b.picked RETURNING `+jobColumns, ids, owners, p.Now, limited)
	}
	writes := queueRates(b, byQueue, all)
	b.Queue(`commit`)
	res := conn.SendBatch(ctx, b)
	defer res.Close()
	var leased []*store.Job
	if len(all) > 0 {
		rows, err := scanJobs(res.Query())
		if err != nil {
			return nil, fmt.Errorf("lease from %q: %w", p.Queues, err)
		}
		leased = leaseOrder(jobs(rows))
	}
	for _, what := range writes {
		if _, err := res.Exec(); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	if _, err := res.Exec(); err != nil {
		return nil, fmt.Errorf("commit a lease of %q: %w", p.Queues, err)
	}
	return leased, res.Close()
}

// read walks queue's available jobs in lease order, a page at a time,
// locking them (SKIP LOCKED: an admin change in flight), passing over the
// keys that can start no more, until the gate's budget runs out or the
// jobs do. It reports whether jobs were left unread. Each page excludes
// every key found full so far, so a flood of one key's jobs costs at most
// one page.
func (a *admitted) read(ctx context.Context, tx querier, queue string, kinds []string) (more bool, err error) {
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
		c := candidate{queue: queue}
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
	b.WriteString(`SELECT id, priority, run_at, concurrency_key FROM jobs WHERE state = 'available' AND queue = $1`)
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
	// column, which an expression such as id::text would shadow; no index
	// orders that, so each lease would sort the queue's backlog (all of it,
	// with rows of one run_at).
	b.WriteString(` ORDER BY priority DESC, run_at, jobs.id LIMIT ` + arg(page))
	if lock {
		b.WriteString(` FOR UPDATE SKIP LOCKED`)
	}
	return b.String(), args
}

// keyTAT hands the gate a key's rate state, read once per key.
func (a *admitted) keyTAT(ctx context.Context, tx querier, queue, key string) error {
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

// queueRates queues on b, for each limited queue, the writes of the rate
// state that a replay of its gate over its jobs in picked (in lease order)
// moved, and the counts of the limits that held jobs back. It returns
// what each queued write is, for its error.
func queueRates(b *pgx.Batch, byQueue map[string]*admitted, picked []candidate) []string {
	keys := map[string][]*string{}
	for _, c := range picked {
		keys[c.queue] = append(keys[c.queue], c.key)
	}
	var writes []string
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
			b.Queue(`UPDATE queues SET rate_tat = $2 WHERE name = $1`, q, tat)
			writes = append(writes, fmt.Sprintf("write rate of %q", q))
		}
		for k, tat := range replay.KeyTATs() {
			b.Queue(`INSERT INTO key_rates (queue, key, tat) VALUES ($1, $2, $3)
				ON CONFLICT (queue, key) DO UPDATE SET tat = excluded.tat`, q, k, tat)
			writes = append(writes, fmt.Sprintf("write rate of key %q of %q", k, q))
		}
		for _, r := range a.gate.Throttled() {
			b.Queue(`INSERT INTO queue_throttles (queue, reason, n) VALUES ($1, $2, 1)
				ON CONFLICT (queue, reason) DO UPDATE SET n = queue_throttles.n + 1`, q, string(r))
			writes = append(writes, fmt.Sprintf("count throttles of %q", q))
		}
	}
	return writes
}

// queueLock queues on b the statements that take queue's row and read
// what its gate needs (lockQueue reads their results). The statements of
// a batch run one after the other, each with a snapshot of its own, so the
// counts, which follow the lock, see every lease of the queue that
// committed before it. Without limits the counts go unused; they read a
// partial index of the limited running rows only.
func queueLock(b *pgx.Batch, queue string) {
	b.Queue(`SELECT limits::text, rate_tat, paused FROM queues WHERE name = $1 FOR UPDATE`, queue)
	b.Queue(`SELECT count(*) FROM jobs WHERE state = 'running' AND limited AND queue = $1`, queue)
	b.Queue(`SELECT concurrency_key, count(*) FROM jobs
		WHERE state = 'running' AND limited AND queue = $1 AND concurrency_key IS NOT NULL
		GROUP BY concurrency_key`, queue)
}

// lockQueue reads the results of queueLock's statements for queue.
func lockQueue(res pgx.BatchResults, queue string, p *store.JobLeaseParams) (gp store.GateParams, paused bool, err error) {
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
	return gp, paused, nil
}
