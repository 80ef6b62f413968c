package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// Reaping in batches of reapBatch, at most reapMaxBatches per tick: a
// backlog of expired leases drains over a few ticks without one long
// transaction blocking the writers.
const (
	reapBatch      = store.MaxBatch
	reapMaxBatches = 10
)

// reaper ends running jobs past their expires_at as timed_out. It is the
// backstop for a live worker stuck on a job; a dead worker's jobs are the
// recoverer's, within DeadAfter, long before their lease runs out.
type reaper struct {
	store   store.Store
	metrics *metrics
}

// runOnce reaps expired leases and returns how many jobs it ended.
func (r *reaper) runOnce(ctx context.Context, now time.Time) (int, error) {
	return inBatches(reapBatch, reapMaxBatches, func(limit int) (int, error) {
		jobs, err := r.store.JobReap(ctx, &store.JobReapParams{Limit: limit, Now: now})
		if err != nil {
			return 0, fmt.Errorf("reap expired leases: %w", err)
		}
		r.metrics.reaped.Add(float64(len(jobs)))
		return len(jobs), nil
	})
}
