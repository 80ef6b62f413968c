package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// wakeupTests check LeaseWakeup: every transition that makes a job
// leasable closes the channel a waiting leaser took before it; nothing
// closes it when nothing happened.
var wakeupTests = []test{
	{"Quiet", testWakeupQuiet},
}

// wakeupRows each prepare a job, then return the transition that makes it
// leasable; the channel is taken between the two.
var wakeupRows = []struct {
	name    string
	prepare func(h *harness) func()
}{
	{"Enqueue", func(h *harness) func() {
		return func() { h.enqueueOne(spec("k", "")) }
	}},
	{"Promote", func(h *harness) func() {
		h.enqueueOne(store.JobSpec{Kind: "k", RunAt: h.now().Add(time.Second)})
		return func() {
			h.advance(time.Minute)
			if n := h.promote(); n != 1 {
				h.t.Fatalf("promoted %d jobs, want 1", n)
			}
		}
	}},
	{"Release", func(h *harness) func() {
		j := h.running("w", spec("k", ""))
		return func() { h.release(j, 0) }
	}},
	{"Recover", func(h *harness) func() {
		j := h.running("w", spec("k", ""))
		o := h.orphan(j)
		return func() { h.recover("node-1", []store.Orphan{o}) }
	}},
	{"Retry", func(h *harness) func() {
		j := h.enqueueOne(spec("k", ""))
		h.cancel(j.ID)
		return func() {
			if _, err := h.retry(j.ID, nil); err != nil {
				h.t.Fatal(err)
			}
		}
	}},
	{"Run", func(h *harness) func() {
		j := h.enqueueOne(store.JobSpec{Kind: "k", RunAt: h.now().Add(time.Hour)})
		return func() {
			if _, err := h.s.JobRun(h.ctx, &store.JobRunParams{ID: j.ID, Now: h.now()}); err != nil {
				h.t.Fatal(err)
			}
		}
	}},
	{"Resume", func(h *harness) func() {
		h.enqueueOne(spec("k", ""))
		h.setPaused(store.DefaultQueue, true)
		return func() { h.setPaused(store.DefaultQueue, false) }
	}},
	{"Deregister", func(h *harness) func() {
		h.running("w", spec("k", ""))
		return func() {
			if err := h.s.WorkerDeregister(h.ctx, &store.WorkerDeregisterParams{ID: "w", Now: h.now()}); err != nil {
				h.t.Fatal(err)
			}
		}
	}},
}

func init() {
	for _, row := range wakeupRows {
		wakeupTests = append(wakeupTests, test{row.name, func(t *testing.T, h *harness) {
			transition := row.prepare(h)
			ch := h.s.LeaseWakeup([]string{store.DefaultQueue})
			transition()
			wantWoken(t, row.name, ch)
			if got := h.lease("w-2", 10); len(got) != 1 {
				t.Errorf("leased %d jobs after the wake-up, want 1", len(got))
			}
		}})
	}
}

func testWakeupQuiet(t *testing.T, h *harness) {
	ch := h.s.LeaseWakeup([]string{store.DefaultQueue})
	if closed(ch) {
		t.Fatal("LeaseWakeup channel closed before anything happened")
	}
	// Reads, and a lease that finds nothing, make nothing leasable.
	h.lease("w", 1)
	h.workers()
	if _, err := h.s.QueueList(h.ctx, &store.QueueListParams{Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.StatsGet(h.ctx, &store.StatsGetParams{Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	if closed(ch) {
		t.Error("LeaseWakeup channel closed though nothing became leasable")
	}
}

func (h *harness) setPaused(name string, paused bool) *store.Queue {
	h.t.Helper()
	q, err := h.s.QueueSetPaused(h.ctx, &store.QueueSetPausedParams{Name: name, Paused: paused, Now: h.now()})
	if err != nil {
		h.t.Fatalf("QueueSetPaused(%q, %v): %v", name, paused, err)
	}
	return q
}
