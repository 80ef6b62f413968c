package sqlite

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tetherq/tether/store"
)

// JobListOrphans finds the running jobs of silent workers. It walks the
// workers index and stops at its limit, so it costs O(its batch + the
// silent workers it passes).
func (s *Store) JobListOrphans(ctx context.Context, p *store.JobListOrphansParams) ([]store.Orphan, error) {
	query, args := orphansQuery(p)
	var rows []struct {
		JobID    string `db:"id"`
		WorkerID string `db:"worker_id"`
		Token    string `db:"token"`
		LastHB   int64  `db:"last_heartbeat_at"`
	}
	if err := s.r.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("list orphans: %w", err)
	}
	out := make([]store.Orphan, len(rows))
	for i, r := range rows {
		out[i] = store.Orphan{JobID: r.JobID, WorkerID: r.WorkerID, Token: r.Token, LastHeartbeatAt: fromMS(r.LastHB)}
	}
	return out, nil
}

// orphansQuery is JobListOrphans's statement and its arguments.
func orphansQuery(p *store.JobListOrphansParams) (string, []any) {
	query := `SELECT j.id, j.worker_id, j.token, w.last_heartbeat_at
		FROM workers w INDEXED BY workers_heartbeat JOIN jobs j INDEXED BY jobs_running_worker
			ON j.worker_id = w.id AND j.state = 'running'
		WHERE w.last_heartbeat_at <= ?`
	args := []any{toMS(p.DeadBefore)}
	if len(p.LiveIDs) > 0 {
		query += ` AND w.id NOT IN (` + marks(len(p.LiveIDs)) + `)`
		for _, id := range p.LiveIDs {
			args = append(args, id)
		}
	}
	// The order is the indexes' own (workers_heartbeat holds each worker's
	// rowid after its heartbeat, jobs_running_worker a worker's jobs by
	// id), so a batch reads its rows and stops. Ordered by heartbeat and job
	// id alone, SQLite sorted every job of workers silent since the same
	// millisecond for each batch: a listing of 10,000 such orphans in
	// batches of 1,000 read 55,000 rows.
	query += ` ORDER BY w.last_heartbeat_at, w.rowid, j.id LIMIT ?`
	return query, append(args, store.LimitOr(p.Limit, store.MaxBatch))
}

// JobRecover rescues each orphan with a compare-and-set on (id, owner,
// token, running): inside the write transaction the read and the write of
// one job cannot interleave with another recoverer's. A bulk rescue takes
// the writer in turns with the live workers' writes (rescueShare), so
// neither starves the other.
func (s *Store) JobRecover(ctx context.Context, p *store.JobRecoverParams) ([]*store.Job, error) {
	var won []*store.Job
	for rest := p.Orphans; len(rest) > 0; {
		asked := time.Now()
		var jobs []*store.Job
		err := s.tx(ctx, func(tx *txn) (bool, error) {
			budget, began := s.rescueHold(time.Since(asked)), time.Now()
			left, wake := rest, false
			for len(left) > 0 {
				stepAt := time.Now()
				chunk := left[:min(rescueStep, len(left))]
				left = left[len(chunk):]
				got, woke, err := recoverChunk(ctx, tx, chunk, p)
				if err != nil {
					return false, err
				}
				jobs, wake = append(jobs, got...), wake || woke
				if !rescueGoesOn(time.Since(began), time.Since(stepAt), budget) {
					break
				}
			}
			rest = left
			return wake, nil
		})
		if err != nil {
			return won, err
		}
		won = append(won, jobs...)
	}
	return won, nil
}

// rescueStep is how many orphans one step of a rescue transaction reads
// (one statement) and ends (endDeliveries); a transaction takes at least
// one step.
const rescueStep = 100

// rescueShare is how long a rescue transaction may hold the writer, given
// how long it waited for it: three quarters of that, so that while live
// workers are writing the rescue takes about 3/7 of the writer's time and
// they keep the rest. (Taking half, the rescue also took CPU from them on
// two cores, and they kept 0.40–0.48 of their rate in BenchmarkRescue.) A
// rescue nobody waits behind still commits every few milliseconds (at least
// rescueMinHold, at most rescueMaxHold, so no write waits behind one for
// long).
func rescueShare(waited time.Duration) time.Duration {
	return min(max(waited*3/4, rescueMinHold), rescueMaxHold)
}

// rescueGoesOn reports whether a rescue transaction that has held the
// writer for held, its last step taking step, takes another step: only if
// one more like the last ends within budget. Checked after each step
// instead (held < budget), a transaction overran its budget by half a step
// on average, and a rescue given as long as it waited took 55 % of the
// writer.
func rescueGoesOn(held, step, budget time.Duration) bool { return held+step <= budget }

const (
	rescueMinHold = 5 * time.Millisecond
	rescueMaxHold = 50 * time.Millisecond
)

// orphanRowsQuery reads the rows of n orphans by id, whole: the rescue
// returns them after the decision (endDeliveries), and reading the whole
// row here costs less than having the update return it.
func orphanRowsQuery(n int) string {
	return `SELECT ` + jobColumns + ` FROM jobs WHERE id IN (` + marks(n) + `)`
}

// recoverChunk rescues the orphans it can in tx and reports whether one
// became available. It reads the chunk's rows in one statement; inside the
// write transaction nothing else writes, so the compare-and-set on (id,
// owner, token, running) is checked on what it read.
func recoverChunk(ctx context.Context, tx *txn, orphans []store.Orphan, p *store.JobRecoverParams) ([]*store.Job, bool, error) {
	now := store.Trunc(p.Now)
	ids := make([]any, len(orphans))
	for i, o := range orphans {
		ids[i] = o.JobID
	}
	rows, err := selectJobRows(ctx, tx, len(ids), orphanRowsQuery(len(ids)), ids...)
	if err != nil {
		return nil, false, fmt.Errorf("read %d orphans: %w", len(orphans), err)
	}
	byID := make(map[string]*jobRow, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	es := make([]ending, 0, len(orphans))
	for _, o := range orphans {
		row := byID[o.JobID]
		if row == nil || row.State != string(store.StateRunning) || !row.WorkerID.Valid || row.WorkerID.String != o.WorkerID ||
			!row.Token.Valid || row.Token.String != o.Token {
			continue // another recoverer won, or the job moved on
		}
		delete(byID, o.JobID) // an orphan listed twice is rescued once
		d := decide(row, store.EndOrphaned, nil, p.MaxRescues, now)
		node, lastHB := p.NodeID, toMS(o.LastHeartbeatAt)
		msg := store.RescueMessage(o.WorkerID, p.NodeID)
		es = append(es, ending{row, d, attemptEnd{by: store.EndedByRescue, outcome: d.Outcome, at: toMS(now), err: &msg,
			recoveredBy: &node, lastHeartbeatAt: &lastHB, lost: true}})
	}
	won, err := endDeliveries(ctx, tx, es)
	if err != nil {
		return nil, false, err
	}
	wake := slices.ContainsFunc(won, func(j *store.Job) bool { return j.State == store.StateAvailable })
	if len(won) > 0 {
		if err := addCounter(ctx, tx, "rescues_total", len(won)); err != nil {
			return nil, false, err
		}
	}
	return won, wake, nil
}

func addCounter(ctx context.Context, tx *txn, name string, n int) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO counters (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = value + excluded.value`, name, n)
	if err != nil {
		return fmt.Errorf("count %s: %w", name, err)
	}
	return nil
}
