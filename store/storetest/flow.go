package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// flowTests check flow control: per-queue concurrency caps and rate
// limits, per-key ones by a job's concurrency_key, and the wake-ups of
// freed slots and refilled buckets.
var flowTests = []test{
	{"KeyKept", testFlowKeyKept},
}

// testFlowKeyKept: a job's concurrency key is stored as given and read
// back by every read, across lease, fail, release and retry, from a single
// and a batch enqueue; a job without one has none.
func testFlowKeyKept(t *testing.T, h *harness) {
	key := "tenant-1:ü"
	jobs := h.enqueue(store.JobSpec{Kind: "k", Queue: "q", ConcurrencyKey: &key}, spec("k", "q2"),
		store.JobSpec{Kind: "k", Queue: "q2", ConcurrencyKey: ptr("other")})
	j := jobs[0]
	check := func(when string, got *store.Job) {
		t.Helper()
		if got.ConcurrencyKey == nil || *got.ConcurrencyKey != key {
			t.Errorf("%s: concurrency key %v, want %q", when, got.ConcurrencyKey, key)
		}
	}
	check("enqueue", j)
	check("get", h.get(j.ID))
	l := h.leaseOne("w", "q")
	check("lease", l)
	check("fail", h.fail(l, "x"))
	h.advance(time.Hour)
	h.promote()
	l = h.leaseOne("w", "q")
	check("release", h.release(l, time.Hour))
	h.cancel(j.ID)
	got, err := h.retry(j.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("retry", got)
	if p := h.get(jobs[1].ID); p.ConcurrencyKey != nil {
		t.Errorf("a job enqueued without a key reads %q", *p.ConcurrencyKey)
	}
	if o := h.get(jobs[2].ID); o.ConcurrencyKey == nil || *o.ConcurrencyKey != "other" {
		t.Errorf("the third job of the batch reads key %v, want other", o.ConcurrencyKey)
	}
}
