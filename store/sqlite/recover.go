package sqlite

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tetherq/tether/store"
)

// JobListOrphans finds the running jobs of silent workers. It starts from
// the workers index, so it costs O(silent workers + their jobs).
func (s *Store) JobListOrphans(ctx context.Context, p *store.JobListOrphansParams) ([]store.Orphan, error) {
	query := `SELECT j.id, j.worker_id, j.token, w.last_heartbeat_at
		FROM workers w JOIN jobs j ON j.worker_id = w.id AND j.state = 'running'
		WHERE w.last_heartbeat_at <= ?`
	args := []any{toMS(p.DeadBefore)}
	if len(p.LiveIDs) > 0 {
		query += ` AND w.id NOT IN (` + marks(len(p.LiveIDs)) + `)`
		for _, id := range p.LiveIDs {
			args = append(args, id)
		}
	}
	query += ` ORDER BY w.last_heartbeat_at, j.id LIMIT ?`
	args = append(args, limitOr(p.Limit, 1000))
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

// JobRecover rescues each orphan with a compare-and-set on (id, owner,
// token, running): inside the write transaction the read and the write of
// one job cannot interleave with another recoverer's.
func (s *Store) JobRecover(ctx context.Context, p *store.JobRecoverParams) ([]*store.Job, error) {
	now := store.Trunc(p.Now)
	var won []*store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		won = nil
		wake := false
		for _, o := range p.Orphans {
			var row jobRow
			err := tx.GetContext(ctx, &row, `SELECT `+jobColumns+` FROM jobs
				WHERE id = ? AND worker_id = ? AND token = ? AND state = 'running'`, o.JobID, o.WorkerID, o.Token)
			if err != nil {
				if isNoRows(err) {
					continue // another recoverer won, or the job moved on
				}
				return false, fmt.Errorf("recover %s: %w", o.JobID, err)
			}
			d := decide(&row, store.EndOrphaned, nil, p.MaxRescues, now)
			node, lastHB := p.NodeID, toMS(o.LastHeartbeatAt)
			msg := fmt.Sprintf("worker %s stopped heartbeating; job recovered by %s", o.WorkerID, p.NodeID)
			j, err := endDelivery(ctx, tx, &row, d, attemptEnd{outcome: d.Outcome, at: toMS(now), err: &msg,
				recoveredBy: &node, lastHeartbeatAt: &lastHB, lost: true})
			if err != nil {
				return false, err
			}
			won = append(won, j)
			wake = wake || j.State == store.StateAvailable
		}
		if len(won) > 0 {
			if err := addCounter(ctx, tx, "rescues_total", len(won)); err != nil {
				return false, err
			}
		}
		return wake, nil
	})
	return won, err
}

// JobReap ends deliveries past their expiry as timed_out.
func (s *Store) JobReap(ctx context.Context, p *store.JobReapParams) ([]*store.Job, error) {
	now := store.Trunc(p.Now)
	var reaped []*store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		reaped = nil
		var rows []jobRow
		err := tx.SelectContext(ctx, &rows, `SELECT `+jobColumns+` FROM jobs
			WHERE state = 'running' AND expires_at <= ? ORDER BY expires_at LIMIT ?`, toMS(now), limitOr(p.Limit, 1000))
		if err != nil {
			return false, fmt.Errorf("list expired leases: %w", err)
		}
		wake := false
		for i := range rows {
			d := decide(&rows[i], store.EndTimedOut, nil, 0, now)
			msg := "lease expired: no ack, fail or extend within the timeout"
			j, err := endDelivery(ctx, tx, &rows[i], d, attemptEnd{outcome: d.Outcome, at: toMS(now), err: &msg, lost: true})
			if err != nil {
				return false, err
			}
			reaped = append(reaped, j)
			wake = wake || j.State == store.StateAvailable
		}
		return wake, nil
	})
	return reaped, err
}

// JobPromote makes due scheduled jobs available.
func (s *Store) JobPromote(ctx context.Context, p *store.JobPromoteParams) (int, error) {
	var n int
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		var queues []string
		err := tx.SelectContext(ctx, &queues, `UPDATE jobs SET state = 'available' WHERE id IN (
			SELECT id FROM jobs WHERE state = 'scheduled' AND run_at <= ? ORDER BY run_at LIMIT ?)
			RETURNING queue`, toMS(p.Now), limitOr(p.Limit, 1000))
		if err != nil {
			return false, fmt.Errorf("promote: %w", err)
		}
		for _, q := range queues {
			tx.moved(q, store.StateScheduled, store.StateAvailable, 1)
		}
		n = len(queues)
		return n > 0, nil
	})
	return n, err
}

// JobPrune deletes finished jobs past retention, their history, and
// expired idempotency keys.
func (s *Store) JobPrune(ctx context.Context, p *store.JobPruneParams) (int, error) {
	var n int
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		var ids []string
		err := tx.SelectContext(ctx, &ids, `SELECT id FROM (
			SELECT id FROM jobs WHERE state IN ('succeeded', 'cancelled') AND finished_at < ? LIMIT ?)
			UNION ALL SELECT id FROM (
			SELECT id FROM jobs WHERE state = 'dead' AND finished_at < ? LIMIT ?)`,
			toMS(p.SucceededBefore), limitOr(p.Limit, 1000), toMS(p.DeadBefore), limitOr(p.Limit, 1000))
		if err != nil {
			return false, fmt.Errorf("list prunable jobs: %w", err)
		}
		if len(ids) > limitOr(p.Limit, 1000) {
			ids = ids[:limitOr(p.Limit, 1000)]
		}
		n = len(ids)
		if err := deleteJobs(ctx, tx, ids); err != nil {
			return false, err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE key IN (
			SELECT key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)`, toMS(p.Now), limitOr(p.Limit, 1000))
		if err != nil {
			return false, fmt.Errorf("prune idempotency keys: %w", err)
		}
		// Workers and nodes silent for the succeeded retention go too, once
		// they hold nothing.
		_, err = tx.ExecContext(ctx, `DELETE FROM workers WHERE last_heartbeat_at < ? AND NOT EXISTS (
			SELECT 1 FROM jobs WHERE jobs.worker_id = workers.id AND jobs.state = 'running')`, toMS(p.SucceededBefore))
		if err != nil {
			return false, fmt.Errorf("prune workers: %w", err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM nodes WHERE last_heartbeat_at < ?`, toMS(p.SucceededBefore))
		if err != nil {
			return false, fmt.Errorf("prune nodes: %w", err)
		}
		return false, pruneThroughput(ctx, tx, p.Now)
	})
	return n, err
}

func deleteJobs(ctx context.Context, tx *txn, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	query, args, err := sqlx.In(`DELETE FROM attempts WHERE job_id IN (?)`, ids)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("delete attempts: %w", err)
	}
	query, args, err = sqlx.In(`DELETE FROM jobs WHERE id IN (?) RETURNING queue, state`, ids)
	if err != nil {
		return err
	}
	var gone []struct {
		Queue string `db:"queue"`
		State string `db:"state"`
	}
	if err := tx.SelectContext(ctx, &gone, query, args...); err != nil {
		return fmt.Errorf("delete jobs: %w", err)
	}
	for _, g := range gone {
		tx.moved(g.Queue, store.State(g.State), "", 1)
	}
	return nil
}

func addCounter(ctx context.Context, tx *txn, name string, n int) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO counters (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = value + excluded.value`, name, n)
	if err != nil {
		return fmt.Errorf("count %s: %w", name, err)
	}
	return nil
}

func limitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
