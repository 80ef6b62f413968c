package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var cancelTests = []test{
	{"Waiting", testCancelWaiting},
	{"RunningThenAck", testCancelRunningThenAck},
	{"RunningThenFail", testCancelRunningThenFail},
	{"Finished", testCancelFinished},
	{"UnknownID", testCancelUnknownID},
}

func testCancelWaiting(t *testing.T, h *harness) {
	jobs := h.enqueue(spec("k", ""), store.JobSpec{Kind: "k", RunAt: h.now().Add(time.Hour)})
	h.advance(time.Second)
	for _, j := range jobs {
		got := h.cancel(j.ID)
		for _, c := range []*store.Job{got, h.get(j.ID)} {
			wantState(t, c, store.StateCancelled, 0, 0)
			wantTimePtr(t, "finished_at", c.FinishedAt, h.now())
			if c.DeadReason != nil {
				t.Errorf("cancelled job has dead reason %s", *c.DeadReason)
			}
		}
	}
	if got := h.lease("w", 10); len(got) != 0 {
		t.Errorf("leased %d cancelled jobs", len(got))
	}
}

func testCancelRunningThenAck(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	got := h.cancel(j.ID)
	for _, c := range []*store.Job{got, h.get(j.ID)} {
		wantState(t, c, store.StateRunning, 1, 0)
		if !c.CancelRequested {
			t.Errorf("cancel of a running job: cancel_requested false")
		}
		if c.Lease == nil || c.Lease.Token != j.Lease.Token {
			t.Errorf("cancel of a running job changed its lease: %+v", c.Lease)
		}
	}
	// The handler finished anyway: an ack still settles it as succeeded.
	got = h.ack(j)
	wantState(t, got, store.StateSucceeded, 1, 0)
	wantOutcome(t, h.get(j.ID), store.OutcomeSucceeded, h.now())
}

func testCancelRunningThenFail(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	h.cancel(j.ID)
	h.advance(time.Second)
	got := h.fail(j, "interrupted")
	for _, c := range []*store.Job{got, h.get(j.ID)} {
		wantState(t, c, store.StateCancelled, 1, 0)
		wantTimePtr(t, "finished_at", c.FinishedAt, h.now())
	}
	wantOutcome(t, h.get(j.ID), store.OutcomeCancelled, h.now())
}

func testCancelFinished(t *testing.T, h *harness) {
	succeeded := h.running("w", spec("k", "a"))
	h.ack(succeeded)
	dead := h.running("w", spec("k", "b"))
	if _, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: dead.ID, Token: token(t, dead), Error: "x", NoRetry: true, Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	cancelled := h.enqueueOne(spec("k", "c"))
	h.cancel(cancelled.ID)
	for _, j := range []*store.Job{succeeded, dead, cancelled} {
		before := h.get(j.ID)
		_, err := h.s.JobCancel(h.ctx, &store.JobCancelParams{ID: j.ID, Now: h.now()})
		wantErr(t, "cancel of a "+string(before.State)+" job", err, store.ErrInvalidState)
		sameJob(t, before, h.get(j.ID))
	}
}

func testCancelUnknownID(t *testing.T, h *harness) {
	_, err := h.s.JobCancel(h.ctx, &store.JobCancelParams{ID: "01950000-0000-7000-8000-000000000000", Now: h.now()})
	wantErr(t, "cancel of an unknown job", err, store.ErrNotFound)
}
