package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// Retention defaults. Succeeded and cancelled jobs are kept a day, long
// enough to look one up after an incident; dead jobs a month, because each
// one waits for a person to retry or delete it.
const (
	DefaultRetentionSucceeded = 24 * time.Hour
	DefaultRetentionDead      = 30 * 24 * time.Hour
)

// Pruning deletes at most pruneBatch jobs per call and pruneMaxBatches calls
// per tick: 10,000 jobs a tick, so that retention keeps up with a queue
// running 10,000 jobs a second at the default tick (at 3,000 a busy store
// grew without end, and with it every vacuum's reading of its indexes).
// Each call is short (SQLite commits every 100 jobs), so a tick that prunes
// never stalls the writes waiting behind it.
const (
	pruneBatch      = store.MaxBatch
	pruneMaxBatches = 10
)

// pruner deletes finished jobs past their retention, with their history.
type pruner struct {
	store     store.Store
	succeeded time.Duration // retention of succeeded and cancelled jobs
	dead      time.Duration
}

// runOnce prunes and returns how many jobs it deleted.
func (p *pruner) runOnce(ctx context.Context, now time.Time) (int, error) {
	return inBatches(pruneBatch, pruneMaxBatches, func(limit int) (int, error) {
		n, err := p.store.JobPrune(ctx, &store.JobPruneParams{
			SucceededBefore: now.Add(-p.succeeded),
			DeadBefore:      now.Add(-p.dead),
			Limit:           limit,
			Now:             now,
		})
		if err != nil {
			return n, fmt.Errorf("prune finished jobs: %w", err)
		}
		return n, nil
	})
}
