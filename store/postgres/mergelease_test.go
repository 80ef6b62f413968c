package postgres_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// Leases of one queue that arrive while one runs go out together in the
// next statement; each call gets at most its max, under its own worker,
// the first calls the first jobs, and no job goes twice.
func TestLeasesMergeWhileOneRuns(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	specs := make([]store.JobSpec, 25)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k", Priority: i} // lease order: highest priority first
	}
	if _, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now}); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var batches []int
	s.SetLeaseHookForTest(func(calls int) {
		mu.Lock()
		batches = append(batches, calls)
		first := len(batches) == 1
		mu.Unlock()
		if first {
			close(entered)
			<-release
		}
	})
	type call struct {
		worker string
		max    int
	}
	// Two calls of w2 share a worker; the last asks for more than is left.
	calls := []call{{"w0", 5}, {"w1", 4}, {"w2", 3}, {"w2", 2}, {"w3", 20}}
	got := make([][]*store.Job, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	lease := func(i int) {
		wg.Go(func() {
			got[i], errs[i] = s.JobLease(ctx, &store.JobLeaseParams{WorkerID: calls[i].worker,
				Queues: []string{store.DefaultQueue}, Max: calls[i].max, Now: now.Add(time.Second)})
		})
	}
	lease(0)
	<-entered
	for i := 1; i < len(calls); i++ {
		lease(i)
		// Queue them in order, so the batch's order is known.
		deadline := time.Now().Add(10 * time.Second)
		for s.LeasesWaitingForTest() < i {
			if time.Now().After(deadline) {
				t.Fatalf("%d leases queued, want %d", s.LeasesWaitingForTest(), i)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	close(release)
	wg.Wait()

	if len(batches) != 2 || batches[0] != 1 || batches[1] != len(calls)-1 {
		t.Errorf("batches of %v leases, want [1 %d]", batches, len(calls)-1)
	}
	seen := map[string]bool{}
	total := 0
	for i, c := range calls {
		if errs[i] != nil {
			t.Fatalf("lease %d: %v", i, errs[i])
		}
		if len(got[i]) > c.max {
			t.Errorf("lease %d got %d jobs, asked for at most %d", i, len(got[i]), c.max)
		}
		for _, j := range got[i] {
			if seen[j.ID] {
				t.Errorf("job %s leased twice", j.ID)
			}
			seen[j.ID] = true
			if j.Lease == nil || j.Lease.WorkerID != c.worker || j.State != store.StateRunning {
				t.Errorf("lease %d (worker %s) got %+v", i, c.worker, j.Lease)
			}
		}
		total += len(got[i])
	}
	// 5 for the first alone, then 4 + 3 + 2 + the 11 left of 20.
	want := []int{5, 4, 3, 2, 11}
	for i := range calls {
		if len(got[i]) != want[i] {
			t.Errorf("lease %d got %d jobs, want %d", i, len(got[i]), want[i])
		}
	}
	if total != 25 {
		t.Errorf("%d jobs leased, want all 25", total)
	}
	// The merged batch handed out in lease order: w1 the highest
	// priorities left after w0's.
	if len(got[1]) > 0 && len(got[4]) > 0 && got[1][0].Priority < got[4][0].Priority {
		t.Errorf("w1's first job has priority %d, below w3's %d", got[1][0].Priority, got[4][0].Priority)
	}
}

func TestLeaseAcrossQueues(t *testing.T) {
	t.Parallel()
	storetest.LeaseOrderAcrossQueues(t, open(t))
}
