package scheduler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
)

// depthsOf lists a queue's depth samples as "mm:ss available/scheduled".
func depthsOf(t *testing.T, st store.Store, queue string) string {
	t.Helper()
	got, err := st.(store.Insights).QueueDepthList(t.Context(), &store.QueueDepthListParams{Queue: queue,
		Since: t0.Add(-time.Hour), Until: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range got {
		out = append(out, fmt.Sprintf("%s %d/%d", d.Minute.Format("04:05"), d.Available, d.Scheduled))
	}
	return strings.Join(out, ", ")
}

// Each minute's first tick samples every queue's backlog; later ticks of
// the minute read nothing; another replica's sample of the same minute
// replaces it.
func TestDepthSampledEachMinute(t *testing.T) {
	t.Parallel()
	st := setup(t)
	a := newNode(t, st, "node-a", scheduler.Config{})
	b := newNode(t, st, "node-b", scheduler.Config{})
	enqueue(t, st, 3, store.JobSpec{Queue: "emails"}, t0)
	enqueue(t, st, 1, store.JobSpec{Queue: "emails", RunAt: t0.Add(time.Hour)}, t0)
	a.tick(t, t0.Add(5*time.Second))
	enqueue(t, st, 2, store.JobSpec{Queue: "emails"}, t0.Add(6*time.Second))
	a.tick(t, t0.Add(30*time.Second))
	if got := depthsOf(t, st, "emails"); got != "00:00 3/1" {
		t.Errorf("after a minute's ticks: %q, want the first tick's sample alone", got)
	}
	b.tick(t, t0.Add(40*time.Second))
	a.tick(t, t0.Add(65*time.Second))
	if got := depthsOf(t, st, "emails"); got != "00:00 5/1, 01:00 5/1" {
		t.Errorf("after node-b's tick and the next minute's: %q", got)
	}
	if out := a.log.Take(); strings.Contains(out, "depth") {
		t.Errorf("sampling logged: %q", out)
	}
}

// With more queues than MaxDepthQueues, the deepest are sampled.
func TestDepthSamplesTheDeepest(t *testing.T) {
	t.Parallel()
	st := setup(t)
	n := newNode(t, st, "node-a", scheduler.Config{})
	specs := make([]store.JobSpec, 0, store.MaxDepthQueues+3)
	for i := range store.MaxDepthQueues + 1 {
		specs = append(specs, store.JobSpec{Kind: "k", Queue: fmt.Sprintf("q%03d", i)})
	}
	specs = append(specs, store.JobSpec{Kind: "k", Queue: "zz-deep"}, store.JobSpec{Kind: "k", Queue: "zz-deep"})
	if _, err := st.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: t0}); err != nil {
		t.Fatal(err)
	}
	n.tick(t, t0)
	last := fmt.Sprintf("q%03d", store.MaxDepthQueues)
	for q, want := range map[string]string{"zz-deep": "00:00 2/0", "q000": "00:00 1/0", last: "",
		fmt.Sprintf("q%03d", store.MaxDepthQueues-2): "00:00 1/0"} {
		if got := depthsOf(t, st, q); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
}
