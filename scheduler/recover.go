package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// recoverBatch is how many orphans one JobListOrphans call returns: enough
// to clear a dead worker's in-flight jobs in one round trip, small enough
// that one JobRecover transaction stays short.
const recoverBatch = store.MaxBatch

// recoverMaxBatches bounds one tick's recovery so a store whose CAS keeps
// missing cannot spin the loop; the rest waits for the next tick.
const recoverMaxBatches = 10

// recoverer rescues running jobs whose owner has been silent for DeadAfter.
// Every node runs it; JobRecover's compare-and-set makes exactly one win
// each orphan, so no leader is elected.
type recoverer struct {
	store      store.Store
	nodeID     string
	deadAfter  time.Duration
	maxRescues int
	metrics    *metrics
}

// runOnce recovers orphans in batches until a short one and returns how
// many jobs this node won.
func (r *recoverer) runOnce(ctx context.Context, now time.Time) (int, error) {
	live, err := r.liveNodes(ctx, now)
	if err != nil {
		return 0, err
	}
	won := 0
	for range recoverMaxBatches {
		orphans, err := r.store.JobListOrphans(ctx, &store.JobListOrphansParams{
			DeadBefore: now.Add(-r.deadAfter), LiveIDs: live, Limit: recoverBatch,
		})
		if err != nil {
			return won, fmt.Errorf("list orphans: %w", err)
		}
		if len(orphans) == 0 {
			break
		}
		jobs, err := r.store.JobRecover(ctx, &store.JobRecoverParams{
			Orphans: orphans, NodeID: r.nodeID, MaxRescues: r.maxRescues, Now: now,
		})
		if err != nil {
			return won, fmt.Errorf("recover %d orphans: %w", len(orphans), err)
		}
		won += len(jobs)
		r.metrics.observeRescues(orphans, jobs, now)
		if len(orphans) < recoverBatch {
			break
		}
	}
	return won, nil
}

// liveNodes lists the server nodes live at now (store.LiveNodeIDs), this
// node among them whatever its row says.
func (r *recoverer) liveNodes(ctx context.Context, now time.Time) ([]string, error) {
	nodes, err := r.store.NodeList(ctx, &store.NodeListParams{})
	if err != nil {
		return nil, err
	}
	return store.LiveNodeIDs(nodes, r.nodeID, now, r.deadAfter), nil
}
