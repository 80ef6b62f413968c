package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// Three replicas with ten leasers each never run more than the cap of 3:
// each lease takes the queue's row in a statement of its own before it
// counts, so READ COMMITTED shows it every lease committed before.
// Counted from the running rows after every lease.
func TestFlowReplicasNeverExceedTheCap(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 3)
	capN := 3
	if _, err := rs[0].QueueSetLimits(t.Context(), &store.QueueSetLimitsParams{Name: "q",
		Limits: &store.Limits{Concurrency: &capN}, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	enqueueN(t, rs[0], "q", 90, time.Now())
	stores := make([]store.Store, len(rs))
	for i, r := range rs {
		stores[i] = r
	}
	storetest.FlowRace(t, stores, time.Now, "q", capN, 10, 90)
}

// A replica that has not yet heard of limits set on another takes no more
// than they allow: its one-statement lease passes over a queue with limits.
func TestFlowLimitsSetElsewhereHoldAtOnce(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2)
	now := time.Now()
	enqueueN(t, rs[0], "q", 5, now)
	// rs[1] reads the queue as unlimited first.
	if _, err := rs[1].JobLease(t.Context(), &store.JobLeaseParams{WorkerID: "w", Queues: []string{"other"}, Max: 1, Now: now}); err != nil {
		t.Fatal(err)
	}
	one := 1
	if _, err := rs[0].QueueSetLimits(t.Context(), &store.QueueSetLimitsParams{Name: "q",
		Limits: &store.Limits{Concurrency: &one}, Now: now}); err != nil {
		t.Fatal(err)
	}
	got, err := rs[1].JobLease(t.Context(), &store.JobLeaseParams{WorkerID: "w", Queues: []string{"q"}, Max: 10, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 1 {
		t.Errorf("a replica unaware of the cap of 1 leased %d", len(got))
	}
}

// Leases of a limited queue that arrive while one runs go out together in
// one locked transaction, which shares out only the room left under the
// cap: the first call in the batch first, no call over its max.
func TestFlowLimitedLeasesMerge(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	capN := 6
	if _, err := s.QueueSetLimits(ctx, &store.QueueSetLimitsParams{Name: store.DefaultQueue,
		Limits: &store.Limits{Concurrency: &capN}, Now: now}); err != nil {
		t.Fatal(err)
	}
	enqueueN(t, s, store.DefaultQueue, 25, now)
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
	maxes := []int{4, 3, 2, 20}
	got := make([][]*store.Job, len(maxes))
	errs := make([]error, len(maxes))
	var wg sync.WaitGroup
	lease := func(i int) {
		wg.Go(func() {
			got[i], errs[i] = s.JobLease(ctx, &store.JobLeaseParams{WorkerID: fmt.Sprintf("w%d", i),
				Queues: []string{store.DefaultQueue}, Max: maxes[i], Now: now})
		})
	}
	lease(0)
	<-entered
	for i := 1; i < len(maxes); i++ {
		lease(i)
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
	if len(batches) != 2 || batches[1] != len(maxes)-1 {
		t.Errorf("batches of %v leases, want [1 %d]", batches, len(maxes)-1)
	}
	want := []int{4, 2, 0, 0} // the cap of 6: the first 4 alone, then 2 to the batch's first call
	for i := range maxes {
		if errs[i] != nil {
			t.Fatalf("lease %d: %v", i, errs[i])
		}
		if len(got[i]) != want[i] {
			t.Errorf("call %d (max %d) leased %d, want %d", i, maxes[i], len(got[i]), want[i])
		}
		for _, j := range got[i] {
			if j.Lease.WorkerID != fmt.Sprintf("w%d", i) {
				t.Errorf("call %d got a job leased to %s", i, j.Lease.WorkerID)
			}
		}
	}
}
