package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var reapTests = []test{
	{"Reap", testReapReap},
	{"Exhausted", testReapExhausted},
	{"ExtendDefers", testReapExtendDefers},
	{"Limit", testReapLimit},
}

func testReapReap(t *testing.T, h *harness) {
	j := h.running("w", store.JobSpec{Kind: "k", Timeout: time.Minute, Backoff: store.Backoff{Base: 10 * time.Second, Max: time.Hour}})
	h.advance(59 * time.Second)
	if got := h.reap(); len(got) != 0 {
		t.Fatalf("reaped %q before expires_at", ids(got))
	}
	h.advance(2 * time.Second)
	got := h.reap()
	if len(got) != 1 || got[0].ID != j.ID {
		t.Fatalf("reaped %q, want [%s]", ids(got), j.ID)
	}
	for _, r := range []*store.Job{got[0], h.get(j.ID)} {
		wantState(t, r, store.StateScheduled, 1, 0)
		wantBackoff(t, r, h.now(), 10*time.Second)
	}
	wantOutcome(t, h.get(j.ID), store.OutcomeTimedOut, h.now())
	if again := h.reap(); len(again) != 0 {
		t.Errorf("reaped %q a second time", ids(again))
	}
	_, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: token(t, j), Now: h.now()})
	wantErr(t, "ack after the reap", err, store.ErrLeaseLost)
	wantSet(t, "lost after the reap", h.heartbeat("w").Lost, j.ID)
}

func testReapExhausted(t *testing.T, h *harness) {
	j := h.running("w", store.JobSpec{Kind: "k", Timeout: time.Minute, MaxAttempts: 1})
	h.advance(time.Minute + time.Second)
	got := h.reap()
	if len(got) != 1 {
		t.Fatalf("reaped %d jobs, want 1", len(got))
	}
	wantDead(t, got[0], store.DeadTimeoutExhausted, h.now())
	wantDead(t, h.get(j.ID), store.DeadTimeoutExhausted, h.now())
	wantOutcome(t, h.get(j.ID), store.OutcomeTimedOut, h.now())
}

func testReapExtendDefers(t *testing.T, h *harness) {
	j := h.running("w", store.JobSpec{Kind: "k", Timeout: time.Minute})
	h.advance(50 * time.Second)
	h.extend(j, 0, nil)
	h.advance(20 * time.Second)
	if got := h.reap(); len(got) != 0 {
		t.Errorf("reaped %q within its extended lease", ids(got))
	}
	h.advance(41 * time.Second)
	if got := h.reap(); len(got) != 1 {
		t.Errorf("reaped %d jobs past the extended lease, want 1", len(got))
	}
}

func testReapLimit(t *testing.T, h *harness) {
	for range 3 {
		h.enqueueOne(store.JobSpec{Kind: "k", Timeout: time.Second})
	}
	h.lease("w", 3)
	h.advance(time.Minute)
	var counts []int
	for range 3 {
		got, err := h.s.JobReap(h.ctx, &store.JobReapParams{Limit: 2, Now: h.now()})
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, len(got))
	}
	if counts[0] != 2 || counts[1] != 1 || counts[2] != 0 {
		t.Errorf("JobReap with Limit 2, three times = %v, want [2 1 0]", counts)
	}
}
