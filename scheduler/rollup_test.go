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

// A minute is rolled once it has settled, not before; a starting node
// goes back rollBack, three minutes a tick.
func TestMinutesRolledOnceSettled(t *testing.T) {
	t.Parallel()
	st := setup(t)
	n := newNode(t, st, "node-a", scheduler.Config{})
	rows := func(until time.Time) string {
		t.Helper()
		got, err := st.(store.Insights).QueueMinuteList(t.Context(), &store.QueueMinuteListParams{Queue: "mail",
			Since: t0.Add(-time.Hour), Until: until})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range got {
			out = append(out, fmt.Sprintf("%s %s %d", m.Minute.Format("15:04"), m.Kind, m.Succeeded))
		}
		return strings.Join(out, ", ")
	}
	enqueue(t, st, 1, store.JobSpec{Queue: "mail", Kind: "send"}, t0.Add(time.Second))
	j := lease(t, st, "w", "mail", 1, t0.Add(2*time.Second))[0]
	if _, err := st.JobAck(t.Context(), &store.JobAckParams{ID: j.ID, Token: j.Lease.Token, Now: t0.Add(3 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	// Enough ticks to catch up from ten minutes back (three a tick).
	ticks := func(at time.Time) {
		for range 5 {
			n.tick(t, at)
		}
	}
	for _, at := range []time.Duration{30 * time.Second, time.Minute + store.MinuteSettle - time.Second} {
		ticks(t0.Add(at))
		if got := rows(t0.Add(time.Hour)); got != "" {
			t.Fatalf("rolled at %s, before the minute settled: %q", at, got)
		}
	}
	ticks(t0.Add(time.Minute + store.MinuteSettle))
	if got := rows(t0.Add(time.Hour)); got != "12:00 send 1" {
		t.Errorf("after the minute settled: %q", got)
	}
	// A node starting an hour on rolls from ten minutes back, three a tick:
	// its first tick rolls 12:50 (and t0's minute stays as node-a rolled it).
	late := newNode(t, st, "node-b", scheduler.Config{})
	enqueue(t, st, 1, store.JobSpec{Queue: "mail", Kind: "late"}, t0.Add(50*time.Minute+time.Second))
	j = lease(t, st, "w", "mail", 1, t0.Add(50*time.Minute+2*time.Second))[0]
	if _, err := st.JobAck(t.Context(), &store.JobAckParams{ID: j.ID, Token: j.Lease.Token, Now: t0.Add(50*time.Minute + 3*time.Second)}); err != nil {
		t.Fatal(err)
	}
	late.tick(t, t0.Add(time.Hour))
	if got := rows(t0.Add(2 * time.Hour)); got != "12:00 send 1, 12:50 late 1" {
		t.Errorf("after the late node's first tick: %q", got)
	}
}
