package redis_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/redis"
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
	holdJobs(t, s, 5, n/5, 0, now)
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

// TestRecoverBatchesSharedKeys: a chunk of orphans writes the keys its
// orphans share (the queue's state sets, each owner's held set and lost
// list, the throughput counter, the rescue index) with one command per key,
// not one per orphan, and what those writes say is what one per orphan
// said: every orphan counted, indexed and reported lost to its owner once.
func TestRecoverBatchesSharedKeys(t *testing.T) {
	t.Parallel()
	srv := storetest.StartRedis(t)
	s := open(t, srv.URL(), "")
	ctx := t.Context()
	now := storetest.Base
	const workers, each = 5, 50
	held := holdJobs(t, s, workers, each, 0, now)
	now = now.Add(time.Minute)
	orphans, err := s.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-store.DefaultDeadAfter), Limit: store.MaxBatch})
	if err != nil || len(orphans) != workers*each {
		t.Fatalf("orphans: %d, %v", len(orphans), err)
	}
	if err := raw(t, srv.URL()).ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if won, err := s.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "node", Now: now}); err != nil || len(won) != workers*each {
		t.Fatalf("recover: %d, %v", len(won), err)
	}
	// Three chunks of 100: w-0 and w-1, w-2 and w-3, w-4 (the listing
	// gives each owner's orphans together).
	want := map[string]int{
		"zadd":    3 * 2,            // the available set, the rescue index
		"zrem":    3,                // the running set
		"srem":    5,                // an owner's held set, per chunk it is in
		"rpush":   workers*each + 5, // each orphan's history; an owner's lost list per chunk
		"hincrby": 3 * 2,            // the minute's throughput, the rescue total
		"hexists": 3,                // whether the queue's limits count slots
	}
	for cmd, n := range want {
		if got := commandCalls(t, srv.URL(), cmd); got != n {
			t.Errorf("%s ran %d times, want %d", cmd, got, n)
		}
	}

	tp, err := s.ThroughputList(ctx, &store.ThroughputListParams{From: now.Truncate(time.Minute), To: now})
	if err != nil || len(tp) != 1 || tp[0].Rescued != workers*each {
		t.Errorf("throughput = %+v, %v; want %d rescued", tp, err, workers*each)
	}
	rescues, err := s.RescueList(ctx, &store.RescueListParams{Limit: 1000})
	indexed := map[string]bool{}
	for _, r := range rescues {
		indexed[r.JobID] = true
	}
	if err != nil || len(rescues) != workers*each || len(indexed) != workers*each {
		t.Errorf("rescue index: %d entries of %d jobs, %v; want %d", len(rescues), len(indexed), err, workers*each)
	}
	for worker, ids := range held {
		res, err := s.WorkerHeartbeat(ctx, &store.WorkerHeartbeatParams{ID: worker, Now: now})
		if err != nil || !sameSet(res.Lost, ids) {
			t.Errorf("%s lost %d jobs, %v; want its %d", worker, len(res.Lost), err, len(ids))
		}
	}
	if again, err := s.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now, Limit: store.MaxBatch}); err != nil || len(again) != 0 {
		t.Errorf("orphans after the rescue: %d, %v; want none (the held sets emptied)", len(again), err)
	}
}

// commandCalls is how many times the server has run cmd since its
// statistics were last reset.
func commandCalls(t *testing.T, url, cmd string) int {
	t.Helper()
	info, err := raw(t, url).Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.Atoi(calls)
		if err != nil {
			t.Fatalf("commandstats line %q: %v", line, err)
		}
		return n
	}
	return 0
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	for _, x := range b {
		if !in[x] {
			return false
		}
	}
	return true
}

// TestRecoverReturnsJobsAsStored: the jobs JobRecover returns (read after
// the script, in its MULTI) are the jobs as stored, a payload kept in the
// hash and one kept in a key of its own alike.
func TestRecoverReturnsJobsAsStored(t *testing.T) {
	t.Parallel()
	s := open(t, testURL(t), "")
	ctx := t.Context()
	now := storetest.Base
	specs := []store.JobSpec{
		{Kind: "k", Payload: json.RawMessage(`{"small":1}`), Tags: []string{"a"}},
		{Kind: "k", Payload: json.RawMessage(`{"large":"` + strings.Repeat("x", 200) + `"}`), Metadata: json.RawMessage(`{"m":1}`)},
	}
	for i := range specs {
		specs[i].Normalize(now)
	}
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	if jobs, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"default"}, Max: 2, Now: now}); err != nil || len(jobs) != 2 {
		t.Fatalf("lease: %d jobs, %v", len(jobs), err)
	}
	now = now.Add(time.Minute)
	orphans, err := s.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-store.DefaultDeadAfter)})
	if err != nil || len(orphans) != 2 {
		t.Fatalf("orphans: %d, %v", len(orphans), err)
	}
	won, err := s.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: "node", Now: now})
	if err != nil || len(won) != 2 {
		t.Fatalf("recover: %d, %v", len(won), err)
	}
	for _, j := range won {
		stored, err := s.JobGet(ctx, &store.JobGetParams{ID: j.ID, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		stored.Attempts = nil // JobGet's own addition
		got, _ := json.Marshal(j)
		want, _ := json.Marshal(stored)
		if string(got) != string(want) {
			t.Errorf("recovered job\n%s\nstored\n%s", got, want)
		}
		if len(j.Payload) < 10 || j.State != store.StateAvailable || j.LastError == nil {
			t.Errorf("recovered job %s: payload %s, state %s, last error %v", j.ID, j.Payload, j.State, j.LastError)
		}
	}
}

// holdJobs enqueues workers × each jobs of kind k (with timeout, if not
// zero) in the default queue at now and has workers w-0, w-1, … lease each
// of them; it returns the ids each worker holds.
func holdJobs(t *testing.T, s *redis.Store, workers, each int, timeout time.Duration, now time.Time) map[string][]string {
	t.Helper()
	specs := make([]store.JobSpec, workers*each)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k", Timeout: timeout}
		specs[i].Normalize(now)
	}
	if _, err := s.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	held := map[string][]string{}
	for w := range workers {
		worker := fmt.Sprint("w-", w)
		jobs, err := s.JobLease(t.Context(), &store.JobLeaseParams{WorkerID: worker, Queues: []string{"default"}, Max: each, Now: now})
		if err != nil || len(jobs) != each {
			t.Fatalf("lease: %d jobs, %v", len(jobs), err)
		}
		for _, j := range jobs {
			held[worker] = append(held[worker], j.ID)
		}
	}
	return held
}
