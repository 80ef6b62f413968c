package redis_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// TestRecoverInChunks: a bulk rescue runs recover.lua once per chunk of
// 100 orphans, not once per orphan, and every orphan across the chunks is
// rescued once, counted once and indexed once. It runs on a redis-server of
// its own, whose command statistics count only this test's scripts.
func TestRecoverInChunks(t *testing.T) {
	t.Parallel()
	srv := storetest.StartRedis(t)
	s := open(t, srv.URL(), "")
	ctx := t.Context()
	now := storetest.Base
	const n = 250
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k"}
		specs[i].Normalize(now)
	}
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	for w := range 5 {
		jobs, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: fmt.Sprint("w-", w), Queues: []string{"default"}, Max: n / 5, Now: now})
		if err != nil || len(jobs) != n/5 {
			t.Fatalf("lease: %d jobs, %v", len(jobs), err)
		}
	}
	now = now.Add(time.Minute)
	orphans, err := s.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-store.DefaultDeadAfter), Limit: store.MaxBatch})
	if err != nil || len(orphans) != n {
		t.Fatalf("orphans: %d, %v", len(orphans), err)
	}
	before := evalCalls(t, srv.URL())
	won, err := s.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "node", MaxRescues: 5, Now: now})
	if err != nil || len(won) != n {
		t.Fatalf("recover: %d, %v; want %d", len(won), err, n)
	}
	if runs := evalCalls(t, srv.URL()) - before; runs != 3 {
		t.Errorf("recovering %d orphans ran %d scripts, want 3", n, runs)
	}
	seen := map[string]bool{}
	for _, j := range won {
		if seen[j.ID] || j.State != store.StateAvailable || j.Rescues != 1 {
			t.Errorf("won %s: %s with %d rescues (seen before: %v)", j.ID, j.State, j.Rescues, seen[j.ID])
		}
		seen[j.ID] = true
	}
	st, err := s.StatsGet(ctx, &store.StatsGetParams{Now: now})
	if err != nil || st.RescuesTotal != n || st.Jobs[store.StateAvailable] != n {
		t.Errorf("stats = %+v, %v; want %d rescues and available", st, err, n)
	}
	again, err := s.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "node", MaxRescues: 5, Now: now})
	if err != nil || len(again) != 0 {
		t.Errorf("recovering the same orphans again won %d, %v; want none", len(again), err)
	}
}

// evalCalls is how many scripts (EVALSHA and EVAL) the server has run.
func evalCalls(t *testing.T, url string) int {
	t.Helper()
	info, err := raw(t, url).Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		n, err := strconv.Atoi(calls)
		if err != nil {
			t.Fatalf("commandstats line %q: %v", line, err)
		}
		total += n
	}
	return total
}
