package sqlite

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// promoteSQL makes up to ? jobs scheduled at or before ? available, by
// the jobs_scheduled index, and returns their queues.
const promoteSQL = `UPDATE jobs SET state = 'available' WHERE id IN (
	SELECT id FROM jobs INDEXED BY jobs_scheduled WHERE state = 'scheduled' AND run_at <= ? ORDER BY run_at LIMIT ?)
	RETURNING queue`

// JobPromote makes due scheduled jobs available, a chunk per transaction
// (inChunks).
func (s *Store) JobPromote(ctx context.Context, p *store.JobPromoteParams) (int, error) {
	queues, err := inChunks(ctx, s, store.LimitOr(p.Limit, store.MaxBatch), func(tx *txn, n int) ([]string, bool, error) {
		var queues []string
		if err := tx.SelectContext(ctx, &queues, promoteSQL, toMS(p.Now), n); err != nil {
			return nil, false, fmt.Errorf("promote: %w", err)
		}
		for _, q := range queues {
			tx.moved(q, store.StateScheduled, store.StateAvailable, 1)
		}
		return queues, len(queues) > 0, nil
	})
	return len(queues), err
}
