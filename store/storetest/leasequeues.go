package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// LeaseOrderAcrossQueues checks, on a fresh store s, that a lease naming
// several queues hands out the best jobs of them all in lease order
// (priority high first, then run_at, then id), however they are spread:
// all from one queue when it holds the best, then the rest across the
// others; of the kinds asked for only; never from a queue not named. The
// backends merge their queues' candidates lazily to keep a lease of many
// queues as cheap as one, and each calls this from its own tests.
func LeaseOrderAcrossQueues(t *testing.T, s store.Store) {
	t.Helper()
	ctx, now := t.Context(), Base
	var specs []store.JobSpec
	for p := 10; p >= 3; p-- { // queue a holds the eight best
		specs = append(specs, store.JobSpec{Kind: "k", Queue: "a", Priority: p})
	}
	specs = append(specs,
		store.JobSpec{Kind: "k", Queue: "b", Priority: 2},
		store.JobSpec{Kind: "k", Queue: "c", Priority: 1},
		store.JobSpec{Kind: "k", Queue: "d", Priority: 1, RunAt: now.Add(-time.Second)}, // before c's
		store.JobSpec{Kind: "other", Queue: "a", Priority: 50},                          // not of the kind
		store.JobSpec{Kind: "k", Queue: "e", Priority: 100},                             // not named
	)
	res, err := s.JobEnqueue(ctx, &store.JobEnqueueParams{Jobs: specs, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	id := func(i int) string { return res.Jobs[i].ID }
	for _, step := range []struct {
		max  int
		want []string
	}{
		{6, []string{id(0), id(1), id(2), id(3), id(4), id(5)}},
		{5, []string{id(6), id(7), id(8), id(10), id(9)}},
		{5, nil},
	} {
		got, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: "w", Queues: []string{"a", "b", "c", "d"},
			Kinds: []string{"k"}, Max: step.max, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range got {
			ids = append(ids, j.ID)
		}
		if !slices.Equal(ids, step.want) {
			t.Errorf("lease of %d from a, b, c, d: %q\nwant %q", step.max, ids, step.want)
		}
	}
}
