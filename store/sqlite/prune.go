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

// Statements of the other prunes: each deletes up to its last ? rows and
// returns their keys.
const (
	pruneKeysSQL = `DELETE FROM idempotency_keys WHERE key IN (
		SELECT key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?) RETURNING key`
	pruneWorkersSQL = `DELETE FROM workers WHERE id IN (
		SELECT id FROM workers WHERE last_heartbeat_at < ? AND NOT EXISTS (
			SELECT 1 FROM jobs WHERE jobs.worker_id = workers.id AND jobs.state = 'running') LIMIT ?) RETURNING id`
	pruneNodesSQL = `DELETE FROM nodes WHERE id IN (
		SELECT id FROM nodes WHERE last_heartbeat_at < ? LIMIT ?) RETURNING id`
)

// JobPrune deletes finished jobs past retention and their history, a
// chunk per transaction (inChunks).
func (s *Store) JobPrune(ctx context.Context, p *store.JobPruneParams) (int, error) {
	gone, err := inChunks(ctx, s, store.LimitOr(p.Limit, store.MaxBatch), func(tx *txn, n int) ([]string, bool, error) {
		var ids []string
		err := tx.SelectContext(ctx, &ids, pruneJobsSQL, toMS(p.SucceededBefore), n, toMS(p.DeadBefore), n)
		if err != nil {
			return nil, false, fmt.Errorf("list prunable jobs: %w", err)
		}
		ids = ids[:min(len(ids), n)]
		return ids, false, deleteJobs(ctx, tx, ids)
	})
	return len(gone), err
}

// KeyPrune deletes expired idempotency keys and webhook delivery ids.
func (s *Store) KeyPrune(ctx context.Context, p *store.KeyPruneParams) (int, error) {
	return s.pruneSome(ctx, "prune idempotency keys", pruneKeysSQL, toMS(p.Now), p.Limit)
}

// WorkerPrune deletes long-silent workers that hold nothing.
func (s *Store) WorkerPrune(ctx context.Context, p *store.WorkerPruneParams) (int, error) {
	return s.pruneSome(ctx, "prune workers", pruneWorkersSQL, toMS(p.SilentBefore), p.Limit)
}

// NodePrune deletes long-silent nodes.
func (s *Store) NodePrune(ctx context.Context, p *store.NodePruneParams) (int, error) {
	return s.pruneSome(ctx, "prune nodes", pruneNodesSQL, toMS(p.SilentBefore), p.Limit)
}

// pruneSome runs query, a delete of up to its last ? rows older than cut
// that returns their keys, a chunk per transaction until limit (default
// store.MaxBatch) or a short chunk, and returns how many rows it deleted;
// what names it in an error.
func (s *Store) pruneSome(ctx context.Context, what, query string, cut int64, limit int) (int, error) {
	gone, err := inChunks(ctx, s, store.LimitOr(limit, store.MaxBatch), func(tx *txn, n int) ([]string, bool, error) {
		var keys []string
		if err := tx.SelectContext(ctx, &keys, query, cut, n); err != nil {
			return nil, false, fmt.Errorf("%s: %w", what, err)
		}
		return keys, false, nil
	})
	return len(gone), err
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
