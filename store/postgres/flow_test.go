package postgres_test

import (
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
