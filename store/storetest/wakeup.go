package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// wakeupTests check LeaseWakeup: every transition that makes a job
// leasable wakes a leaser waiting on its queue; nothing wakes it when
// nothing happened, or when it happened in another queue; n new jobs wake
// n waiters of their queue, longest-waiting first, not all of them.
var wakeupTests = []test{
	{"Quiet", testWakeupQuiet},
	{"OtherQueue", testWakeupOtherQueue},
	{"HandOff", testWakeupHandOff},
	{"ReleasePassesOn", testWakeupReleasePassesOn},
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
			w := h.s.LeaseWakeup([]string{store.DefaultQueue})
			transition()
			wantWoken(t, row.name, w.C())
			if got := h.lease("w-2", 10); len(got) != 1 {
				t.Errorf("leased %d jobs after the wake-up, want 1", len(got))
			}
		}})
	}
}

func testWakeupQuiet(t *testing.T, h *harness) {
	w := h.s.LeaseWakeup([]string{store.DefaultQueue})
	defer w.Release()
	ch := w.C()
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

// testWakeupOtherQueue: an enqueue wakes the waiters of its queue, not one
// that waits on another. Shared stores deliver wake-ups asynchronously, but
// one message names one queue: once it woke the waiter of its queue it was
// handled, and the other waiter's silence then means something.
func testWakeupOtherQueue(t *testing.T, h *harness) {
	other := h.s.LeaseWakeup([]string{"other"})
	defer other.Release()
	mine := h.s.LeaseWakeup([]string{"mine", "third"})
	h.enqueueOne(spec("k", "mine"))
	wantWoken(t, "an enqueue in mine", mine.C())
	if closed(other.C()) {
		t.Error("an enqueue in mine woke a leaser waiting on other")
	}
}

// testWakeupHandOff: one new job wakes one waiter of its queue, the
// longest-waiting; a batch of two wakes the next two; a resume wakes all.
func testWakeupHandOff(t *testing.T, h *harness) {
	var ws []*store.Waiter
	for range 4 {
		w := h.s.LeaseWakeup([]string{store.DefaultQueue})
		defer w.Release()
		ws = append(ws, w)
	}
	h.enqueueOne(spec("k", ""))
	wantWoken(t, "one enqueued job", ws[0].C())
	for i, w := range ws[1:] {
		if closed(w.C()) {
			t.Errorf("one enqueued job woke waiter %d too: a herd, not a hand-off", i+2)
		}
	}
	h.enqueue(spec("k", ""), spec("k", ""))
	wantWoken(t, "two enqueued jobs", ws[1].C())
	wantWoken(t, "two enqueued jobs", ws[2].C())
	if closed(ws[3].C()) {
		t.Error("two enqueued jobs woke three waiters")
	}
	h.setPaused(store.DefaultQueue, true)
	h.setPaused(store.DefaultQueue, false)
	wantWoken(t, "a resume", ws[3].C())
}

// testWakeupReleasePassesOn: a waiter woken for a job and released without
// leasing it passes the wake-up to the next waiter of the queue, so the job
// is not left with every leaser asleep.
func testWakeupReleasePassesOn(t *testing.T, h *harness) {
	first := h.s.LeaseWakeup([]string{store.DefaultQueue})
	second := h.s.LeaseWakeup([]string{store.DefaultQueue})
	defer second.Release()
	h.enqueueOne(spec("k", ""))
	wantWoken(t, "one enqueued job", first.C())
	if closed(second.C()) {
		t.Fatal("one enqueued job woke both waiters")
	}
	first.Release() // its client left before it leased
	wantWoken(t, "the first waiter's release", second.C())
}
