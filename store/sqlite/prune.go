package sqlite

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tetherq/tether/store"
)

// pruneJobsSQL reads up to ? succeeded or cancelled jobs finished before
// ?, then up to ? dead ones finished before ?.
const pruneJobsSQL = `SELECT id FROM (
	SELECT id FROM jobs INDEXED BY jobs_finished
	WHERE state IN ('succeeded', 'cancelled', 'dead') AND state IN ('succeeded', 'cancelled') AND finished_at < ? LIMIT ?)
	UNION ALL SELECT id FROM (
	SELECT id FROM jobs INDEXED BY jobs_finished
	WHERE state IN ('succeeded', 'cancelled', 'dead') AND state = 'dead' AND finished_at < ? LIMIT ?)`

// Statements of the other prunes: each deletes up to its last ? rows.
const (
	pruneKeysSQL = `DELETE FROM idempotency_keys WHERE key IN (
		SELECT key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)`
	pruneWorkersSQL = `DELETE FROM workers WHERE id IN (
		SELECT id FROM workers WHERE last_heartbeat_at < ? AND NOT EXISTS (
			SELECT 1 FROM jobs WHERE jobs.worker_id = workers.id AND jobs.state = 'running') LIMIT ?)`
	pruneNodesSQL = `DELETE FROM nodes WHERE id IN (
		SELECT id FROM nodes WHERE last_heartbeat_at < ? LIMIT ?)`
)

// JobPrune deletes finished jobs past retention and their history.
func (s *Store) JobPrune(ctx context.Context, p *store.JobPruneParams) (int, error) {
	var n int
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		var ids []string
		limit := store.LimitOr(p.Limit, store.MaxBatch)
		err := tx.SelectContext(ctx, &ids, pruneJobsSQL, toMS(p.SucceededBefore), limit, toMS(p.DeadBefore), limit)
		if err != nil {
			return false, fmt.Errorf("list prunable jobs: %w", err)
		}
		ids = ids[:min(len(ids), limit)]
		n = len(ids)
		return false, deleteJobs(ctx, tx, ids)
	})
	return n, err
}

// KeyPrune deletes expired idempotency keys and webhook delivery ids.
func (s *Store) KeyPrune(ctx context.Context, p *store.KeyPruneParams) (int, error) {
	return s.deleteSome(ctx, "prune idempotency keys", pruneKeysSQL, toMS(p.Now), store.LimitOr(p.Limit, store.MaxBatch))
}

// WorkerPrune deletes long-silent workers that hold nothing.
func (s *Store) WorkerPrune(ctx context.Context, p *store.WorkerPruneParams) (int, error) {
	return s.deleteSome(ctx, "prune workers", pruneWorkersSQL, toMS(p.SilentBefore), store.LimitOr(p.Limit, store.MaxBatch))
}

// NodePrune deletes long-silent nodes.
func (s *Store) NodePrune(ctx context.Context, p *store.NodePruneParams) (int, error) {
	return s.deleteSome(ctx, "prune nodes", pruneNodesSQL, toMS(p.SilentBefore), store.LimitOr(p.Limit, store.MaxBatch))
}

// deleteSome runs one bounded delete in a write transaction and returns
// how many rows it deleted; what names it in an error.
func (s *Store) deleteSome(ctx context.Context, what, query string, args ...any) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return false, fmt.Errorf("%s: %w", what, err)
		}
		n, err = res.RowsAffected()
		return false, err
	})
	return int(n), err
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
