package sqlite

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// JobListOrphans finds the running jobs of silent workers. It starts from
// the workers index, so it costs O(silent workers + their jobs).
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
	query += ` ORDER BY w.last_heartbeat_at, j.id LIMIT ?`
	return query, append(args, store.LimitOr(p.Limit, store.MaxBatch))
}

// JobRecover rescues each orphan with a compare-and-set on (id, owner,
// token, running): inside the write transaction the read and the write of
// one job cannot interleave with another recoverer's. The orphans go
// writeChunk to a transaction, so a bulk rescue lets the live workers'
// writes through between chunks.
func (s *Store) JobRecover(ctx context.Context, p *store.JobRecoverParams) ([]*store.Job, error) {
	var won []*store.Job
	for rest := p.Orphans; len(rest) > 0; {
		chunk := rest[:min(writeChunk, len(rest))]
		rest = rest[len(chunk):]
		var jobs []*store.Job
		err := s.tx(ctx, func(tx *txn) (bool, error) {
			var wake bool
			var err error
			jobs, wake, err = recoverChunk(ctx, tx, chunk, p)
			return wake, err
		})
		if err != nil {
			return won, err
		}
		won = append(won, jobs...)
	}
	return won, nil
}

// orphanColumns are what a rescue reads of a job: its compare-and-set
// (state, owner, token), the failure decision's inputs and the open
// attempt's, not the payload and the rest of the row, which the update
// returns after the decision anyway.
const orphanColumns = `id, queue, state, attempt, max_attempts, rescues, cancel_requested, backoff_base_ms,
	backoff_max_ms, run_at, started_at, worker_id, token, attempt_id`

// orphanRowsQuery reads the rows of n orphans by id.
func orphanRowsQuery(n int) string {
	return `SELECT ` + orphanColumns + ` FROM jobs WHERE id IN (` + marks(n) + `)`
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
	var rows []jobRow
	if err := tx.SelectContext(ctx, &rows, orphanRowsQuery(len(ids)), ids...); err != nil {
		return nil, false, fmt.Errorf("read %d orphans: %w", len(orphans), err)
	}
	byID := make(map[string]*jobRow, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	var won []*store.Job
	wake := false
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
		j, err := endDelivery(ctx, tx, row, d, attemptEnd{by: endByRescue, outcome: d.Outcome, at: toMS(now), err: &msg,
			recoveredBy: &node, lastHeartbeatAt: &lastHB, lost: true})
		if err != nil {
			return nil, false, err
		}
		won = append(won, j)
		wake = wake || j.State == store.StateAvailable
	}
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
