package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// Two stores on one prefix, as two replicas, with ten leasers each never
// run more than the cap of 3, counted from the running jobs after every
// lease.
func TestFlowReplicasNeverExceedTheCap(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	prefix := newPrefix()
	t.Cleanup(func() { dropPrefix(t, url, prefix) })
	a, b := open(t, url, prefix), open(t, url, prefix)
	capN := 3
	if _, err := a.QueueSetLimits(t.Context(), &store.QueueSetLimitsParams{Name: "q",
		Limits: &store.Limits{Concurrency: &capN}, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	specs := make([]store.JobSpec, 60)
	for i := range specs {
		specs[i] = store.JobSpec{Kind: "k", Queue: "q"}
	}
	if _, err := a.JobEnqueue(context.Background(), &store.JobEnqueueParams{Jobs: specs, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	storetest.FlowRace(t, []store.Store{a, b}, time.Now, "q", capN, 10, 60)
}
