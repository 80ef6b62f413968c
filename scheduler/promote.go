package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// Promoting in batches of promoteBatch, at most promoteMaxBatches per tick,
// so a burst of jobs due at the same instant becomes available within a few
// ticks without one long write.
const (
	promoteBatch      = store.MaxBatch
	promoteMaxBatches = 10
)

// promoter makes due scheduled jobs (delayed, or backing off after a
// failure) available, so they read as available within one tick.
type promoter struct {
	store store.Store
}

// runOnce promotes due jobs and returns how many it moved.
func (p *promoter) runOnce(ctx context.Context, now time.Time) (int, error) {
	return inBatches(promoteBatch, promoteMaxBatches, func(limit int) (int, error) {
		n, err := p.store.JobPromote(ctx, &store.JobPromoteParams{Limit: limit, Now: now})
		if err != nil {
			return n, fmt.Errorf("promote due jobs: %w", err)
		}
		return n, nil
	})
}
