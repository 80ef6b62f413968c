package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// recoverBatch is how many orphans one JobListOrphans call returns and one
// JobRecover call rescues: enough that a batch's round trips are a small
// part of its cost. (SQLite commits a batch in several transactions, each
// holding the writer for a share of how long it waited, so the live
// workers' writes pass between; see sqlite.rescueShare.)
const recoverBatch = store.MaxBatch

// recoverMaxBatches bounds one tick's recovery at 50,000 orphans: a tick
// rescues every orphan it finds, so 10,000 jobs of 100 workers that went
// silent together are back one tick after the tick that saw them dead. A
// batch that wins nothing ends the tick's recovery (another node won the
// race, or the store keeps missing its compare-and-set), so the loop never
// spins; the next tick lists again.
const recoverMaxBatches = 50

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
		if len(orphans) < recoverBatch || len(jobs) == 0 {
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
