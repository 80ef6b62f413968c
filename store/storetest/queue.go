package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var queueTests = []test{
	{"Counts", testQueueCounts},
	{"List", testQueueList},
	{"Paused", testQueuePaused},
	{"Stats", testQueueStats},
	{"PingAndClock", testPingAndClock},
}

// Ping answers while the store is idle and right after writes (readiness
// depends on it), and the store's clock is a real, current time.
func testPingAndClock(t *testing.T, h *harness) {
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if err := h.s.Ping(ctx); err != nil {
		t.Fatalf("ping an idle store: %v", err)
	}
	h.enqueue(spec("k", "a"))
	if err := h.s.Ping(ctx); err != nil {
		t.Fatalf("ping after a write: %v", err)
	}
	now, err := h.s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(now); d > time.Minute || d < -time.Minute {
		t.Errorf("store clock %v is %v away from this process's", now, d)
	}
}

func testQueueCounts(t *testing.T, h *harness) {
	jobs := h.enqueue(
		store.JobSpec{Kind: "k", RunAt: h.now().Add(time.Hour)},                                        // scheduled
		store.JobSpec{Kind: "k", Priority: 9, Backoff: store.Backoff{Base: time.Hour, Max: time.Hour}}, // retrying
		store.JobSpec{Kind: "k", Priority: 8},                                                          // succeeded
		store.JobSpec{Kind: "k", Priority: 7, MaxAttempts: 1},                                          // dead
		store.JobSpec{Kind: "k", Priority: 6},                                                          // running
		store.JobSpec{Kind: "k", RunAt: h.now().Add(-5 * time.Minute)},                                 // available, oldest
		store.JobSpec{Kind: "k", RunAt: h.now().Add(-time.Minute)},                                     // available
		store.JobSpec{Kind: "k", RunAt: h.now().Add(2 * time.Hour)},                                    // cancelled
		store.JobSpec{Kind: "k", Queue: "other"},                                                       // not counted here
	)
	h.fail(h.leaseOne("w"), "retry me")
	h.ack(h.leaseOne("w"))
	h.fail(h.leaseOne("w"), "out of tries")
	h.leaseOne("w")
	h.cancel(jobs[7].ID)

	q := h.queue(store.DefaultQueue)
	want := map[store.State]int64{
		store.StateScheduled: 2, store.StateAvailable: 2, store.StateRunning: 1,
		store.StateSucceeded: 1, store.StateDead: 1, store.StateCancelled: 1,
	}
	var sum int64
	for _, s := range store.States {
		sum += q.Counts[s]
		if q.Counts[s] != want[s] {
			t.Errorf("%s = %d, want %d", s, q.Counts[s], want[s])
		}
	}
	if sum != 8 {
		t.Errorf("the six counts sum to %d, want the queue's 8 jobs", sum)
	}
	if q.Retrying != 1 {
		t.Errorf("retrying = %d, want 1 (scheduled with attempt > 0)", q.Retrying)
	}
	if q.OldestAvailableAt == nil {
		t.Error("oldest_available_at = nil, want the oldest available run_at")
	} else {
		wantTime(t, "oldest_available_at", *q.OldestAvailableAt, jobs[5].RunAt)
	}
	if q.Paused {
		t.Error("queue reads paused")
	}
}

func testQueueList(t *testing.T, h *harness) {
	h.enqueue(spec("k", "other"), spec("k", ""))
	h.setPaused("paused", true)
	list, err := h.s.QueueList(h.ctx, &store.QueueListParams{Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range list {
		names = append(names, q.Name)
	}
	if want := []string{store.DefaultQueue, "other", "paused"}; !slices.Equal(names, want) {
		t.Errorf("QueueList names = %q, want %q (by name)", names, want)
	}
	if o := h.queue("other"); o.Counts[store.StateAvailable] != 1 || o.OldestAvailableAt == nil {
		t.Errorf("other queue = %+v, want one available job", o)
	}
	// With nothing available, there is no oldest.
	h.lease("w", 10, "other")
	if o := h.queue("other"); o.OldestAvailableAt != nil {
		t.Errorf("oldest_available_at of a queue with nothing available = %s", fmtTime(*o.OldestAvailableAt))
	}
}

func testQueuePaused(t *testing.T, h *harness) {
	// Pausing a queue with no jobs creates it.
	if q := h.setPaused("empty", true); q.Name != "empty" || !q.Paused {
		t.Errorf("pause = %+v, want empty, paused", q)
	}
	if q := h.queue("empty"); !q.Paused {
		t.Error("paused queue reads unpaused")
	}
	h.enqueueOne(spec("k", "full"))
	h.setPaused("full", true)
	if q := h.queue("full"); !q.Paused || q.Counts[store.StateAvailable] != 1 {
		t.Errorf("paused queue with a job = %+v, want paused with 1 available", q)
	}
	if q := h.setPaused("full", false); q.Paused || q.Counts[store.StateAvailable] != 1 {
		t.Errorf("resume = %+v, want unpaused with its counts", q)
	}
	if q := h.queue("full"); q.Paused {
		t.Error("resumed queue reads paused")
	}
}

func testQueueStats(t *testing.T, h *harness) {
	h.enqueue(spec("k", "a"), spec("k", "a"), spec("k", "b"))
	h.ack(h.leaseOne("w", "a"))
	j := h.enqueueOne(spec("k", ""))
	h.rescue(j.ID, "w-1", 0)
	h.enqueueOne(spec("k", "d"))
	l := h.leaseOne("w-2", "d")
	h.recover("node-1", []store.Orphan{h.orphan(l)})

	stats, err := h.s.StatsGet(h.ctx, &store.StatsGetParams{Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[store.State]int64{store.StateAvailable: 4, store.StateSucceeded: 1}
	for _, s := range store.States {
		if stats.Jobs[s] != want[s] {
			t.Errorf("stats %s = %d, want %d", s, stats.Jobs[s], want[s])
		}
	}
	if stats.RescuesTotal != 2 {
		t.Errorf("rescues_total = %d, want 2", stats.RescuesTotal)
	}
}
