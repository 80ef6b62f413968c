package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/storetest"
)

// replicas opens n stores on one fresh schema, each with its own pool and
// listener, as n server replicas would.
func replicas(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	url := newSchema(t)
	out := make([]*postgres.Store, n)
	for i := range out {
		out[i] = openURL(t, url)
	}
	return out
}

// enqueueN enqueues n jobs of kind k in queue through s, in batches.
func enqueueN(t testing.TB, s store.Store, queue string, n int, now time.Time) []*store.Job {
	t.Helper()
	var all []*store.Job
	for done := 0; done < n; done += 1000 {
		specs := make([]store.JobSpec, min(1000, n-done))
		for i := range specs {
			specs[i] = store.JobSpec{Kind: "k", Queue: queue}
		}
		res, err := s.JobEnqueue(context.Background(), &store.JobEnqueueParams{Jobs: specs, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.Jobs...)
	}
	return all
}

// Replicas starting together on an empty schema migrate it once: the
// session lock makes the others wait, then find nothing to do.
func TestReplicasMigrateOnce(t *testing.T) {
	t.Parallel()
	url := newSchema(t)
	var wg sync.WaitGroup
	stores := make([]*postgres.Store, 3)
	errs := make([]error, 3)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: open: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	var applied int
	if err := stores[0].QueryRowForTest(t.Context(), `SELECT count(*) FROM goose_db_version WHERE version_id = 1`, &applied); err != nil {
		t.Fatal(err)
	}
	if applied != 1 {
		t.Errorf("migration 1 recorded %d times, want once", applied)
	}
}

// Three replicas recover the same 500 orphans at once: each job is
// rescued exactly once (one orphaned attempt, rescues 1, attempt still 1,
// raised to 2 by the next lease only), and the replicas never wait for one
// another.
func TestReplicasRecoverOrphansOnce(t *testing.T) {
	t.Parallel()
	const n = 500
	rs := replicas(t, 3)
	ctx := t.Context()
	clock := storetest.NewClock(storetest.Base)
	enqueueN(t, rs[0], store.DefaultQueue, n, clock.Now())
	leased, err := rs[0].JobLease(ctx, &store.JobLeaseParams{WorkerID: "silent", Queues: []string{store.DefaultQueue}, Max: 1000, Now: clock.Now()})
	if err != nil || len(leased) != n {
		t.Fatalf("lease: %d jobs, %v; want %d", len(leased), err, n)
	}
	now := clock.Advance(time.Minute)

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		won   = map[string]int{}
		start = make(chan struct{})
	)
	for i, r := range rs {
		wg.Go(func() {
			<-start
			orphans, err := r.JobListOrphans(ctx, &store.JobListOrphansParams{DeadBefore: now.Add(-store.DefaultDeadAfter), Limit: 1000})
			if err != nil {
				t.Errorf("replica %d: list orphans: %v", i, err)
				return
			}
			got, err := r.JobRecover(ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: fmt.Sprintf("node-%d", i), Now: now})
			if err != nil {
				t.Errorf("replica %d: recover: %v", i, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, j := range got {
				won[j.ID]++
			}
		})
	}
	close(start)
	wg.Wait()

	for _, l := range leased {
		if won[l.ID] != 1 {
			t.Errorf("job %s rescued %d times, want once", l.ID, won[l.ID])
		}
	}
	for i, l := range leased[:50] { // every 10th job in full
		if i%10 != 0 {
			continue
		}
		j, err := rs[2].JobGet(ctx, &store.JobGetParams{ID: l.ID, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		orphaned := 0
		for _, a := range j.Attempts {
			if a.Outcome == store.OutcomeOrphaned {
				orphaned++
			}
		}
		if j.State != store.StateAvailable || j.Attempt != 1 || j.Rescues != 1 || orphaned != 1 {
			t.Errorf("job %s: %s attempt %d rescues %d with %d orphaned entries, want available 1 1 1",
				j.ID, j.State, j.Attempt, j.Rescues, orphaned)
		}
	}
	stats, err := rs[1].StatsGet(ctx, &store.StatsGetParams{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if stats.RescuesTotal != n || stats.Jobs[store.StateAvailable] != n || stats.Jobs[store.StateRunning] != 0 {
		t.Errorf("stats = %+v, want %d rescues and %d available", stats, n, n)
	}
	again, err := rs[2].JobLease(ctx, &store.JobLeaseParams{WorkerID: "w-2", Queues: []string{store.DefaultQueue}, Max: 1000, Now: now})
	if err != nil || len(again) != n {
		t.Fatalf("lease after the rescue: %d jobs, %v; want %d", len(again), err, n)
	}
	for _, j := range again {
		if j.Attempt != 2 || j.Rescues != 1 {
			t.Errorf("job %s leased again at attempt %d rescues %d, want 2 and 1", j.ID, j.Attempt, j.Rescues)
		}
	}
}

// 3 replicas × 20 leasers drain one queue: no job is delivered twice, and
// every job is delivered.
func TestReplicasNeverDoubleLease(t *testing.T) {
	t.Parallel()
	const n, perReplica, max = 3000, 20, 7
	rs := replicas(t, 3)
	ctx := t.Context()
	now := storetest.Base
	enqueueN(t, rs[0], store.DefaultQueue, n, now)

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		owner = map[string]string{}
		dups  []string
		start = make(chan struct{})
	)
	for i, r := range rs {
		for k := range perReplica {
			worker := fmt.Sprintf("r%d-w%d", i, k)
			wg.Go(func() {
				<-start
				for {
					jobs, err := r.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: []string{store.DefaultQueue}, Max: max, Now: now})
					if err != nil {
						t.Errorf("%s: lease: %v", worker, err)
						return
					}
					mu.Lock()
					for _, j := range jobs {
						if prev, ok := owner[j.ID]; ok {
							dups = append(dups, fmt.Sprintf("%s to %s and %s", j.ID, prev, worker))
						}
						owner[j.ID] = worker
					}
					mu.Unlock()
					if len(jobs) == 0 {
						return
					}
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if len(dups) > 0 {
		t.Errorf("%d jobs leased twice, e.g. %s", len(dups), dups[0])
	}
	if len(owner) != n {
		t.Errorf("leased %d distinct jobs, want %d", len(owner), n)
	}
	stats, err := rs[0].StatsGet(ctx, &store.StatsGetParams{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Jobs[store.StateRunning] != n || stats.Jobs[store.StateAvailable] != 0 {
		t.Errorf("counts after draining = %v, want %d running", stats.Jobs, n)
	}
}

// Producers on three replicas enqueue the same unique_key at once: one job
// is created, and every call answers with it.
func TestReplicasUniqueKeyOnce(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 3)
	ctx := t.Context()
	key := "once"
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ids   = map[string]int{}
		fresh int
		start = make(chan struct{})
	)
	for i := range 30 {
		r := rs[i%3]
		wg.Go(func() {
			<-start
			res, err := r.JobEnqueue(ctx, &store.JobEnqueueParams{
				Jobs: []store.JobSpec{{Kind: "k", UniqueKey: &key}, {Kind: "k"}}, Now: storetest.Base,
			})
			if err != nil {
				t.Errorf("enqueue: %v", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[res.Jobs[0].ID]++
			if !res.Existing[0] {
				fresh++
			}
		})
	}
	close(start)
	wg.Wait()
	if len(ids) != 1 || fresh != 1 {
		t.Errorf("30 enqueues of one unique_key made %d jobs (%d reported new), want 1", len(ids), fresh)
	}
	stats, err := rs[0].StatsGet(ctx, &store.StatsGetParams{Now: storetest.Base})
	if err != nil {
		t.Fatal(err)
	}
	if got := stats.Jobs[store.StateAvailable]; got != 31 {
		t.Errorf("available = %d, want the keyed job and the 30 unkeyed ones", got)
	}
}

// The same Idempotency-Key sent through three replicas at once creates one
// job; every call answers with it.
func TestReplicasIdempotencyKeyOnce(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 3)
	ctx := t.Context()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ids   = map[string]int{}
		start = make(chan struct{})
	)
	for i := range 30 {
		r := rs[i%3]
		wg.Go(func() {
			<-start
			res, err := r.JobEnqueue(ctx, &store.JobEnqueueParams{
				Jobs: []store.JobSpec{{Kind: "k"}}, IdempotencyKey: "key-1", RequestHash: "h", Now: storetest.Base,
			})
			if err != nil {
				t.Errorf("enqueue: %v", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[res.Jobs[0].ID]++
		})
	}
	close(start)
	wg.Wait()
	if len(ids) != 1 {
		t.Errorf("30 calls with one idempotency key made %d jobs, want 1", len(ids))
	}
	stats, err := rs[0].StatsGet(ctx, &store.StatsGetParams{Now: storetest.Base})
	if err != nil {
		t.Fatal(err)
	}
	if got := stats.Jobs[store.StateAvailable]; got != 1 {
		t.Errorf("available = %d, want 1", got)
	}
}
