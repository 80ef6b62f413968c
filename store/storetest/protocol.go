package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// protocolTests pin the worker protocol's bullets of API.md ("Leasing and
// settling") that are not a row of the failure-decision table.
var protocolTests = []test{
	{"RescueKeepsPlace", testProtocolRescueKeepsPlace},
	{"ReleaseKeepsPlace", testProtocolReleaseKeepsPlace},
	{"RepeatedFail", testProtocolRepeatedFail},
	{"RepeatedRelease", testProtocolRepeatedRelease},
	{"CancelHonouredByRelease", testProtocolCancelHonouredByRelease},
	{"CancelHonouredByDeregister", testProtocolCancelHonouredByDeregister},
	{"TraceKept", testProtocolTraceKept},
}

// testProtocolRescueKeepsPlace: a job rescued from a dead worker is leased
// before the jobs enqueued after it, however long its owner held it.
func testProtocolRescueKeepsPlace(t *testing.T, h *harness) {
	held := h.running("w-dead", spec("k", "q"))
	h.advance(time.Second)
	later := h.enqueueOne(spec("k", "q"))
	h.recover("node-1", []store.Orphan{h.orphan(held)})
	if got := h.leaseOne("w-2", "q"); got.ID != held.ID {
		t.Errorf("after the rescue the next lease got %s, want the rescued job %s ahead of %s", got.ID, held.ID, later.ID)
	}
}

// testProtocolReleaseKeepsPlace: a job released without a delay is leased
// before the jobs enqueued after it; one released with a delay waits.
func testProtocolReleaseKeepsPlace(t *testing.T, h *harness) {
	held := h.running("w", spec("k", "q"))
	h.advance(time.Second)
	later := h.enqueueOne(spec("k", "q"))
	h.advance(time.Second)
	h.release(held, 0)
	if got := h.leaseOne("w-2", "q"); got.ID != held.ID {
		t.Errorf("after a release the next lease got %s, want the released job %s ahead of %s", got.ID, held.ID, later.ID)
	}
}

// testProtocolRepeatedFail: a fail repeated under the token that failed
// the delivery answers the job as it is now and changes nothing; a release
// under that token, or the fail under a token re-leased since, is 409.
func testProtocolRepeatedFail(t *testing.T, h *harness) {
	j := h.running("w", spec("k", "q"))
	tok := token(t, j)
	first := h.fail(j, "boom")
	h.advance(time.Second)
	again, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: tok, Error: "boom", Now: h.now()})
	if err != nil {
		t.Fatalf("a repeated fail: %v, want the job", err)
	}
	sameJob(t, first, again)
	if n := len(h.get(j.ID).Attempts); n != 1 {
		t.Errorf("%d attempts after a repeated fail, want 1", n)
	}
	errs := h.settleFails(store.JobFailParams{ID: j.ID, Token: tok, Error: "boom"})
	if errs[0] != nil {
		t.Errorf("a fail repeated in a settle: %v, want ok", errs[0])
	}
	_, err = h.s.JobRelease(h.ctx, &store.JobReleaseParams{ID: j.ID, Token: tok, Now: h.now()})
	wantErr(t, "a release under the token a fail ended", err, store.ErrLeaseLost)
	// Leased again (the retry is due): the old token is stale for good.
	h.advance(time.Hour)
	h.promote()
	h.leaseOne("w-2", "q")
	_, err = h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: tok, Error: "boom", Now: h.now()})
	wantErr(t, "a repeated fail after a new lease", err, store.ErrLeaseLost)
}

// testProtocolRepeatedRelease: a release repeated under the token that
// released the delivery answers the job; a fail under it is 409.
func testProtocolRepeatedRelease(t *testing.T, h *harness) {
	j := h.running("w", spec("k", "q"))
	tok := token(t, j)
	first := h.release(j, time.Minute)
	again, err := h.s.JobRelease(h.ctx, &store.JobReleaseParams{ID: j.ID, Token: tok, Delay: time.Minute, Now: h.now()})
	if err != nil {
		t.Fatalf("a repeated release: %v, want the job", err)
	}
	sameJob(t, first, again)
	if again.Attempt != 0 {
		t.Errorf("attempt %d after a release and its repeat, want 0: a repeat refunds nothing more", again.Attempt)
	}
	_, err = h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: tok, Error: "x", Now: h.now()})
	wantErr(t, "a fail under the token a release ended", err, store.ErrLeaseLost)
}

// testProtocolCancelHonouredByRelease: a running job whose cancellation
// was requested ends cancelled when its worker releases it, not back in
// the queue.
func testProtocolCancelHonouredByRelease(t *testing.T, h *harness) {
	j := h.running("w", spec("k", "q"))
	h.cancel(j.ID)
	got := h.release(j, 0)
	wantState(t, got, store.StateCancelled, 0, 0)
	wantOutcome(t, h.get(j.ID), store.OutcomeCancelled, h.now())
	if n := len(h.lease("w-2", 1, "q")); n != 0 {
		t.Errorf("leased %d jobs after the cancelled release, want none", n)
	}
}

// testProtocolCancelHonouredByDeregister: likewise when its worker
// deregisters.
func testProtocolCancelHonouredByDeregister(t *testing.T, h *harness) {
	j := h.running("w", spec("k", "q"))
	kept := h.running("w", spec("k", "r"))
	h.cancel(j.ID)
	if err := h.s.WorkerDeregister(h.ctx, &store.WorkerDeregisterParams{ID: "w", Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	wantState(t, h.get(j.ID), store.StateCancelled, 0, 0)
	wantState(t, h.get(kept.ID), store.StateAvailable, 0, 0)
}

// settleFails settles fails in one JobSettle call and returns its results.
func (h *harness) settleFails(fails ...store.JobFailParams) []error {
	h.t.Helper()
	res, err := h.s.JobSettle(h.ctx, &store.JobSettleParams{Fails: fails, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobSettle: %v", err)
	}
	return res
}

// testProtocolTraceKept: a job's trace context is stored as given and read
// back unchanged by every read, across lease, fail, rescue, release, retry
// and run; a job without one has none.
func testProtocolTraceKept(t *testing.T, h *harness) {
	tr := &store.Trace{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", State: "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7"}
	j := h.enqueueOne(store.JobSpec{Kind: "k", Queue: "q", Trace: tr})
	plain := h.enqueueOne(spec("k", "plain"))
	check := func(when string, got *store.Job) {
		t.Helper()
		if got.Trace == nil || *got.Trace != *tr {
			t.Errorf("%s: trace %+v, want %+v", when, got.Trace, tr)
		}
	}
	check("enqueue", j)
	l := h.leaseOne("w", "q")
	check("lease", l)
	check("fail", h.fail(l, "x"))
	h.advance(time.Hour)
	h.promote()
	l = h.leaseOne("w", "q")
	h.recover("node-1", []store.Orphan{h.orphan(l)})
	check("rescue", h.get(j.ID))
	l = h.leaseOne("w-2", "q")
	check("release", h.release(l, time.Hour))
	run, err := h.s.JobRun(h.ctx, &store.JobRunParams{ID: j.ID, Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	check("run", run)
	h.cancel(j.ID)
	got, err := h.retry(j.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("retry", got)
	if p := h.get(plain.ID); p.Trace != nil {
		t.Errorf("a job enqueued without a trace reads %+v", p.Trace)
	}
	list, err := h.s.JobList(h.ctx, &store.JobListParams{Queue: "q", Limit: 10, Now: h.now()})
	if err != nil || len(list) != 1 {
		t.Fatalf("JobList: %v, %v", list, err)
	}
	check("list", list[0])
}
