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

// recoverChunk rescues the orphans it can in tx and reports whether one
// became available.
func recoverChunk(ctx context.Context, tx *txn, orphans []store.Orphan, p *store.JobRecoverParams) ([]*store.Job, bool, error) {
	now := store.Trunc(p.Now)
	var won []*store.Job
	wake := false
	for _, o := range orphans {
		var row jobRow
		err := tx.GetContext(ctx, &row, `SELECT `+jobColumns+` FROM jobs
			WHERE id = ? AND worker_id = ? AND token = ? AND state = 'running'`, o.JobID, o.WorkerID, o.Token)
		if err != nil {
			if isNoRows(err) {
				continue // another recoverer won, or the job moved on
			}
			return nil, false, fmt.Errorf("recover %s: %w", o.JobID, err)
		}
		d := decide(&row, store.EndOrphaned, nil, p.MaxRescues, now)
		node, lastHB := p.NodeID, toMS(o.LastHeartbeatAt)
		msg := store.RescueMessage(o.WorkerID, p.NodeID)
		j, err := endDelivery(ctx, tx, &row, d, attemptEnd{outcome: d.Outcome, at: toMS(now), err: &msg,
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
