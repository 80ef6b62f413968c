package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// silentPruner forgets workers and server nodes silent for as long as
// succeeded jobs are kept: long enough to read who held a job after an
// incident. A worker that still holds a running job is kept until that job
// is recovered.
type silentPruner struct {
	store  store.Store
	silent time.Duration // the succeeded retention
}

// runOnce deletes silent workers, then silent nodes, and returns how many
// of both it deleted.
func (p *silentPruner) runOnce(ctx context.Context, now time.Time) (int, error) {
	before := now.Add(-p.silent)
	workers, err := inBatches(pruneBatch, pruneMaxBatches, func(limit int) (int, error) {
		return p.store.WorkerPrune(ctx, &store.WorkerPruneParams{SilentBefore: before, Limit: limit})
	})
	if err != nil {
		return workers, fmt.Errorf("prune silent workers: %w", err)
	}
	nodes, err := p.store.NodePrune(ctx, &store.NodePruneParams{SilentBefore: before, Limit: pruneBatch})
	if err != nil {
		return workers + nodes, fmt.Errorf("prune silent nodes: %w", err)
	}
	return workers + nodes, nil
}
