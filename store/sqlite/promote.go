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

// JobPromote makes due scheduled jobs available.
func (s *Store) JobPromote(ctx context.Context, p *store.JobPromoteParams) (int, error) {
	var n int
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		var queues []string
		err := tx.SelectContext(ctx, &queues, promoteSQL, toMS(p.Now), store.LimitOr(p.Limit, store.MaxBatch))
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
