package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// pruneJobsSQL deletes up to $3 jobs finished before their cut-off
// (succeeded and cancelled $1, dead $2), oldest first, with their history.
// The ids go through arrays so both deletes stay index lookups.
const pruneJobsSQL = `WITH victims AS (
		(SELECT id FROM jobs WHERE state IN ('succeeded', 'cancelled') AND finished_at < $1
			ORDER BY finished_at LIMIT $3)
		UNION ALL
		(SELECT id FROM jobs WHERE state = 'dead' AND finished_at < $2 ORDER BY finished_at LIMIT $3)
		LIMIT $3
	), gone AS (
		DELETE FROM jobs WHERE id = ANY(ARRAY(SELECT id FROM victims)) RETURNING id
	), history AS (
		DELETE FROM attempts WHERE job_id = ANY(ARRAY(SELECT id FROM gone))
	)
	SELECT count(*) FROM gone`

// JobPrune deletes up to Limit finished jobs past their retention, oldest
// first, with their history, plus expired idempotency keys and long-silent
// workers and nodes; the caller repeats it until a short batch. Each class
// is read from its own partial index, so a prune costs O(Limit).
func (s *Store) JobPrune(ctx context.Context, p *store.JobPruneParams) (int, error) {
	limit := limitOr(p.Limit, 1000)
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, pruneJobsSQL, store.Trunc(p.SucceededBefore), store.Trunc(p.DeadBefore), limit).Scan(&n)
		if err != nil {
			return fmt.Errorf("prune jobs: %w", err)
		}
		_, err = tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE key IN (
			SELECT key FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)`, store.Trunc(p.Now), limit)
		if err != nil {
			return fmt.Errorf("prune idempotency keys: %w", err)
		}
		// Workers and nodes silent for the succeeded retention go too, once
		// they hold nothing.
		_, err = tx.Exec(ctx, `DELETE FROM workers w WHERE last_heartbeat_at < $1 AND NOT EXISTS (
			SELECT 1 FROM jobs j WHERE j.worker_id = w.id AND j.state = 'running')`, store.Trunc(p.SucceededBefore))
		if err != nil {
			return fmt.Errorf("prune workers: %w", err)
		}
		_, err = tx.Exec(ctx, `DELETE FROM nodes WHERE last_heartbeat_at < $1`, store.Trunc(p.SucceededBefore))
		if err != nil {
			return fmt.Errorf("prune nodes: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, s.foldCounts(ctx)
}
