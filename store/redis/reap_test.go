package redis_test

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// TestReapInChunks: a reap of many expired leases runs reap.lua once per
// chunk of 100, not once per job, and ends every job once: each counted
// as failed in its minute, reported lost to its owner, and not reaped
// again. It runs on a redis-server of its own, whose command statistics
// count only this test's scripts.
func TestReapInChunks(t *testing.T) {
	t.Parallel()
	srv := storetest.StartRedis(t)
	s := open(t, srv.URL(), "")
	ctx := t.Context()
	now := storetest.Base
	const workers, each = 5, 50
	held := holdJobs(t, s, workers, each, time.Second, now)
	now = now.Add(2 * time.Second)
	before := evalCalls(t, srv.URL())
	reaped, err := s.JobReap(ctx, &store.JobReapParams{Now: now})
	if err != nil || len(reaped) != workers*each {
		t.Fatalf("reap: %d, %v; want %d", len(reaped), err, workers*each)
	}
	if runs := evalCalls(t, srv.URL()) - before; runs != 1+3 {
		t.Errorf("reaping %d jobs ran %d scripts, want 4 (the listing and 3 chunks)", workers*each, runs)
	}
	seen := map[string]bool{}
	for _, j := range reaped {
		if seen[j.ID] || j.State != store.StateScheduled || j.Lease != nil || j.LastError == nil || *j.LastError != store.ReapMessage {
			t.Errorf("reaped %s: %s, lease %v, last error %v (seen before: %v)", j.ID, j.State, j.Lease, j.LastError, seen[j.ID])
		}
		seen[j.ID] = true
	}
	tp, err := s.ThroughputList(ctx, &store.ThroughputListParams{From: now.Truncate(time.Minute), To: now})
	if err != nil || len(tp) != 1 || tp[0].Failed != workers*each {
		t.Errorf("throughput = %+v, %v; want %d failed", tp, err, workers*each)
	}
	for worker, ids := range held {
		res, err := s.WorkerHeartbeat(ctx, &store.WorkerHeartbeatParams{ID: worker, Now: now})
		if err != nil || !sameSet(res.Lost, ids) {
			t.Errorf("%s lost %d jobs, %v; want its %d", worker, len(res.Lost), err, len(ids))
		}
	}
	if again, err := s.JobReap(ctx, &store.JobReapParams{Now: now}); err != nil || len(again) != 0 {
		t.Errorf("reaping again ended %d, %v; want none", len(again), err)
	}
}
