package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// candidate is an available job a limited lease considered, in lease
// order.
type candidate struct {
	ID       string  `db:"id"`
	Priority int     `db:"priority"`
	RunAt    int64   `db:"run_at"`
	Key      *string `db:"concurrency_key"`
	queue    string
}

func leaseOrder(a, b candidate) int {
	return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.RunAt, b.RunAt), cmp.Compare(a.ID, b.ID))
}

// admitted is what a limited lease decided for one queue.
type admitted struct {
	gate   *store.Gate
	params store.GateParams
	jobs   []candidate
	// keyTATs are the key rates' states as read, for the replay.
	keyTATs map[string]int64
}

// leaseLimited is JobLease for a lease naming at least one queue with
// limits. Each queue's candidates pass its store.Gate in lease order,
// counted from job state (the running rows marked limited) under the
// writer's lock, which no other lease shares; the queues' admitted jobs
// are then merged in lease order up to Max. The gates' rate state is
// replayed over the jobs actually leased, so a job cut by the merge
// spends nothing.
func (s *Store) leaseLimited(ctx context.Context, tx *txn, p *store.JobLeaseParams, queues []string) ([]jobRow, map[string]*admitted, error) {
	byQueue := map[string]*admitted{}
	var all []candidate
	for _, q := range queues {
		a, err := admitQueue(ctx, tx, q, tx.w.limits[q], p)
		if err != nil {
			return nil, nil, err
		}
		if a == nil {
			continue // paused
		}
		byQueue[q] = a
		all = append(all, a.jobs...)
	}
	slices.SortFunc(all, leaseOrder)
	all = all[:min(len(all), p.Max)]
	if len(all) == 0 {
		return nil, byQueue, nil
	}
	// Only the jobs of limited queues enter jobs_running_limited.
	var limited []any
	for q, a := range byQueue {
		if !a.params.Limits.None() {
			limited = append(limited, q)
		}
	}
	now := toMS(store.Trunc(p.Now))
	ids := append([]any{p.WorkerID, now, now}, limited...)
	for _, c := range all {
		ids = append(ids, c.ID)
	}
	var rows []jobRow
	err := tx.SelectContext(ctx, &rows, `UPDATE jobs SET state = 'running', attempt = attempt + 1, worker_id = ?,
		token = lower(hex(randomblob(16))), attempt_id = lower(hex(randomblob(16))),
		started_at = ?, expires_at = ? + timeout_ms, limited = queue IN (`+marks(len(limited))+`)
		WHERE id IN (`+marks(len(all))+`) AND state = 'available'
		RETURNING `+jobColumns, ids...)
	if err != nil {
		return nil, nil, fmt.Errorf("lease from %v: %w", queues, err)
	}
	if err := writeRates(ctx, tx, byQueue, rows); err != nil {
		return nil, nil, err
	}
	return rows, byQueue, nil
}

// admitQueue reads queue's candidates through its gate; nil when the
// queue is paused. A queue without limits passes Max candidates.
func admitQueue(ctx context.Context, tx *txn, queue string, l *store.Limits, p *store.JobLeaseParams) (*admitted, error) {
	tat, paused, err := rateTAT(ctx, tx, queue)
	if err != nil || paused {
		return nil, err
	}
	gp := store.GateParams{Limits: l, Max: p.Max, TAT: tat, Now: p.Now}
	if l != nil && l.Concurrency != nil {
		if err := tx.GetContext(ctx, &gp.Running, `SELECT count(*) FROM jobs INDEXED BY jobs_running_limited
			WHERE state = 'running' AND limited = 1 AND queue = ?`, queue); err != nil {
			return nil, fmt.Errorf("count running jobs of %q: %w", queue, err)
		}
	}
	if l != nil && l.KeyConcurrency != nil {
		if gp.KeyRunning, err = keyRunning(ctx, tx, queue); err != nil {
			return nil, err
		}
	}
	a := &admitted{gate: store.NewGate(gp), params: gp, keyTATs: map[string]int64{}}
	more, err := a.read(ctx, tx, queue, p.Kinds)
	if err != nil {
		return nil, err
	}
	a.gate.Done(more)
	return a, nil
}

// keyRunning counts the running jobs of each key of queue.
func keyRunning(ctx context.Context, tx *txn, queue string) (map[string]int, error) {
	var rows []struct {
		Key string `db:"concurrency_key"`
		N   int    `db:"n"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT concurrency_key, count(*) AS n FROM jobs INDEXED BY jobs_running_limited
		WHERE state = 'running' AND limited = 1 AND queue = ? AND concurrency_key IS NOT NULL
		GROUP BY concurrency_key`, queue); err != nil {
		return nil, fmt.Errorf("count running jobs of %q by key: %w", queue, err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Key] = r.N
	}
	return out, nil
}

// read walks queue's available jobs in lease order, a page at a time,
// passing over the keys that can start no more, until the gate's budget
// runs out or the jobs do. It reports whether jobs were left unread.
// Each page excludes every key found full so far, so a flood of one
// key's jobs is read at most one page at a time before it is excluded.
func (a *admitted) read(ctx context.Context, tx *txn, queue string, kinds []string) (more bool, err error) {
	var after *candidate
	held := map[string]bool{} // keys a key rate refused at this instant
	for a.gate.Budget() > 0 {
		page := a.gate.Budget() + 1
		excluded := a.gate.Saturated()
		for k := range held {
			excluded = append(excluded, k)
		}
		query, args := candidateQuery(queue, kinds, excluded, after, page)
		var rows []candidate
		if err := tx.SelectContext(ctx, &rows, query, args...); err != nil {
			return false, fmt.Errorf("read candidates of %q: %w", queue, err)
		}
		for i := range rows {
			c := rows[i]
			if a.gate.Budget() == 0 {
				return true, nil
			}
			c.queue = queue
			if c.Key != nil && a.gate.KeyRated() {
				if err := a.keyTAT(ctx, tx, queue, *c.Key); err != nil {
					return false, err
				}
			}
			if a.gate.Admit(c.Key) {
				a.jobs = append(a.jobs, c)
			} else if c.Key != nil {
				held[*c.Key] = true
			}
		}
		if len(rows) < page {
			return false, nil
		}
		after = &rows[len(rows)-1]
	}
	// The budget ran out before a page: were there jobs it held back?
	var exists bool
	query, args := candidateQuery(queue, kinds, nil, after, 1)
	if err := tx.GetContext(ctx, &exists, `SELECT EXISTS (`+query+`)`, args...); err != nil {
		return false, fmt.Errorf("probe candidates of %q: %w", queue, err)
	}
	return exists, nil
}

// candidateQuery reads up to page available jobs of queue after the
// candidate after (nil: from the first), in lease order, through the
// queue's slice of jobs_available, keys in excluded passed over.
func candidateQuery(queue string, kinds, excluded []string, after *candidate, page int) (string, []any) {
	var b strings.Builder
	args := []any{queue}
	b.WriteString(`SELECT id, priority, run_at, concurrency_key FROM jobs INDEXED BY jobs_available
		WHERE state = 'available' AND queue = ?`)
	if len(kinds) > 0 {
		b.WriteString(` AND kind IN (` + marks(len(kinds)) + `)`)
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	if len(excluded) > 0 {
		b.WriteString(` AND (concurrency_key IS NULL OR concurrency_key NOT IN (` + marks(len(excluded)) + `))`)
		for _, k := range excluded {
			args = append(args, k)
		}
	}
	if after != nil {
		b.WriteString(` AND (priority < ? OR (priority = ? AND (run_at > ? OR (run_at = ? AND id > ?))))`)
		args = append(args, after.Priority, after.Priority, after.RunAt, after.RunAt, after.ID)
	}
	b.WriteString(` ORDER BY priority DESC, run_at, id LIMIT ?`)
	return b.String(), append(args, page)
}

// keyTAT hands the gate a key's rate state, read once per key.
func (a *admitted) keyTAT(ctx context.Context, tx *txn, queue, key string) error {
	if _, read := a.keyTATs[key]; read {
		return nil
	}
	var tats []int64
	if err := tx.SelectContext(ctx, &tats, `SELECT tat FROM key_rates WHERE queue = ? AND key = ?`, queue, key); err != nil {
		return fmt.Errorf("read rate of key %q of %q: %w", key, queue, err)
	}
	a.keyTATs[key] = 0
	if len(tats) > 0 {
		a.keyTATs[key] = tats[0]
	}
	a.gate.SetKeyTAT(key, a.keyTATs[key])
	return nil
}

// writeRates replays each limited queue's gate over the jobs it leased
// and writes the rate state they moved, and counts the limits that held
// jobs back.
func writeRates(ctx context.Context, tx *txn, byQueue map[string]*admitted, rows []jobRow) error {
	// RETURNING gives no order.
	leased := map[string][]*string{} // keys of the leased jobs, per queue, in lease order
	slices.SortFunc(rows, func(a, b jobRow) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.RunAt, b.RunAt), cmp.Compare(a.ID, b.ID))
	})
	for i := range rows {
		leased[rows[i].Queue] = append(leased[rows[i].Queue], strPtr(rows[i].ConcurrencyKey))
	}
	for q, a := range byQueue {
		if a.params.Limits.None() {
			continue
		}
		replay := store.NewGate(a.params)
		for k, tat := range a.keyTATs {
			replay.SetKeyTAT(k, tat)
		}
		for _, k := range leased[q] {
			replay.Admit(k)
		}
		if tat, changed := replay.TAT(); changed {
			if _, err := tx.ExecContext(ctx, `UPDATE queues SET rate_tat = ? WHERE name = ?`, tat, q); err != nil {
				return fmt.Errorf("write rate of %q: %w", q, err)
			}
		}
		for k, tat := range replay.KeyTATs() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO key_rates (queue, key, tat) VALUES (?, ?, ?)
				ON CONFLICT (queue, key) DO UPDATE SET tat = excluded.tat`, q, k, tat); err != nil {
				return fmt.Errorf("write rate of key %q of %q: %w", k, q, err)
			}
		}
		for _, r := range a.gate.Throttled() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO queue_throttles (queue, reason, n) VALUES (?, ?, 1)
				ON CONFLICT (queue, reason) DO UPDATE SET n = n + 1`, q, string(r)); err != nil {
				return fmt.Errorf("count throttles of %q: %w", q, err)
			}
		}
	}
	return nil
}

// wakeLater sets the timed wake-up of each queue a rate held back: no
// transition will announce its refill.
func (s *Store) wakeLater(byQueue map[string]*admitted, now time.Time) {
	for q, a := range byQueue {
		if at, ok := a.gate.WakeAt(); ok {
			s.wake.SignalAfter(q, at.Sub(now))
		}
	}
}
