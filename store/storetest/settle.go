package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var settleTests = []test{
	{"Ack", testSettleAck},
	{"FailBackoff", testSettleFailBackoff},
	{"FailRetryIn", testSettleFailRetryIn},
	{"FailRetryInZero", testSettleFailRetryInZero},
	{"FailExhausted", testSettleFailExhausted},
	{"FailNoRetry", testSettleFailNoRetry},
	{"Extend", testSettleExtend},
	{"ExtendHeartbeats", testSettleExtendHeartbeats},
	{"Release", testSettleRelease},
	{"ReleaseDelay", testSettleReleaseDelay},
	{"Attempts", testSettleAttempts},
	{"Batch", testSettleBatch},
	{"BatchRepeats", testSettleBatchRepeats},
}

func testSettleAck(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	h.advance(3 * time.Second)
	got, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: token(t, j), Result: json.RawMessage(`{"sent": true}`), Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []*store.Job{got, h.get(j.ID)} {
		wantState(t, a, store.StateSucceeded, 1, 0)
		wantJSON(t, "result", a.Result, []byte(`{"sent": true}`))
		wantTimePtr(t, "finished_at", a.FinishedAt, h.now())
		if a.DeadReason != nil {
			t.Errorf("succeeded job has dead reason %s", *a.DeadReason)
		}
	}
	wantOutcome(t, h.get(j.ID), store.OutcomeSucceeded, h.now())
	if w := h.workers()["w"]; w == nil || len(w.InFlight) != 0 {
		t.Errorf("worker after its only ack: %+v, want no job in flight", w)
	}
}

// failAgain promotes a retried job and leases it again.
func (h *harness) failAgain(j *store.Job, msg string) *store.Job {
	h.t.Helper()
	h.advance(j.Backoff.Max + time.Second)
	h.promote()
	return h.fail(h.leaseOne("w", j.Queue), msg)
}

func testSettleFailBackoff(t *testing.T, h *harness) {
	j := h.running("w", store.JobSpec{Kind: "k", Backoff: store.Backoff{Base: 10 * time.Second, Max: 25 * time.Second}})
	got := h.fail(j, "boom")
	for _, f := range []*store.Job{got, h.get(j.ID)} {
		wantState(t, f, store.StateScheduled, 1, 0)
		wantBackoff(t, f, h.now(), 10*time.Second)
		if f.LastError == nil || *f.LastError != "boom" {
			t.Errorf("last_error = %v, want boom", deref(f.LastError))
		}
		if f.FinishedAt != nil {
			t.Errorf("a retried job has finished_at %s", fmtTime(*f.FinishedAt))
		}
	}
	a := lastAttempt(t, h.get(j.ID))
	if a.Outcome != store.OutcomeFailed || a.Error == nil || *a.Error != "boom" {
		t.Errorf("attempt = %s with error %v, want failed with boom", a.Outcome, deref(a.Error))
	}
	// Attempt 2 doubles the base; attempt 3 is capped at Max.
	got = h.failAgain(j, "boom 2")
	wantState(t, got, store.StateScheduled, 2, 0)
	wantBackoff(t, got, h.now(), 20*time.Second)
	got = h.failAgain(j, "boom 3")
	wantState(t, got, store.StateScheduled, 3, 0)
	wantBackoff(t, got, h.now(), 25*time.Second)
	if got.LastError == nil || *got.LastError != "boom 3" {
		t.Errorf("last_error = %v, want the latest error", deref(got.LastError))
	}
}

func testSettleFailRetryIn(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(t, j), Error: "later", RetryIn: ptr(5 * time.Minute), Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, got, store.StateScheduled, 1, 0)
	wantTime(t, "run_at", got.RunAt, h.now().Add(5*time.Minute))
}

func testSettleFailRetryInZero(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	h.advance(time.Second)
	got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(t, j), Error: "now", RetryIn: ptr(time.Duration(0)), Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, got, store.StateAvailable, 1, 0)
	wantTime(t, "run_at", got.RunAt, h.now())
	if again := h.leaseOne("w"); again.ID != j.ID || again.Attempt != 2 {
		t.Errorf("leased %s attempt %d, want the retried job at attempt 2", again.ID, again.Attempt)
	}
}

func testSettleFailExhausted(t *testing.T, h *harness) {
	j := h.running("w", store.JobSpec{Kind: "k", MaxAttempts: 2})
	h.fail(j, "one")
	got := h.failAgain(j, "two")
	wantState(t, got, store.StateDead, 2, 0)
	wantDead(t, got, store.DeadAttemptsExhausted, h.now())
	if got.LastError == nil || *got.LastError != "two" {
		t.Errorf("last_error = %v, want two", deref(got.LastError))
	}
	wantOutcome(t, h.get(j.ID), store.OutcomeFailed, h.now())
}

func testSettleFailNoRetry(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(t, j), Error: "bad input", NoRetry: true, Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	wantDead(t, got, store.DeadFailedPermanently, h.now())
	wantDead(t, h.get(j.ID), store.DeadFailedPermanently, h.now())
	wantOutcome(t, h.get(j.ID), store.OutcomeFailed, h.now())
}

func (h *harness) extend(j *store.Job, d time.Duration, progress *int) *store.Job {
	h.t.Helper()
	got, err := h.s.JobExtend(h.ctx, &store.JobExtendParams{ID: j.ID, Token: token(h.t, j), Extend: d, Progress: progress, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobExtend(%s): %v", j.ID, err)
	}
	return got
}

func testSettleExtend(t *testing.T, h *harness) {
	j := h.running("w", store.JobSpec{Kind: "k", Timeout: time.Minute})
	h.advance(20 * time.Second)
	got := h.extend(j, 5*time.Minute, ptr(42))
	if got.Lease == nil || got.Lease.Token != j.Lease.Token {
		t.Fatalf("extend changed or dropped the lease: %+v", got.Lease)
	}
	wantTime(t, "expires_at after extend 5m", got.Lease.ExpiresAt, h.now().Add(5*time.Minute))
	read := h.get(j.ID)
	wantTime(t, "stored expires_at", read.Lease.ExpiresAt, h.now().Add(5*time.Minute))
	if read.Progress == nil || *read.Progress != 42 {
		t.Errorf("progress = %v, want 42", deref(read.Progress))
	}
	if read.CancelRequested {
		t.Errorf("cancel_requested before any cancel")
	}
	// Without a duration, the job's own timeout; extends may shorten.
	h.advance(10 * time.Second)
	got = h.extend(j, 0, nil)
	wantTime(t, "expires_at after a default extend", got.Lease.ExpiresAt, h.now().Add(time.Minute))
	// A requested cancellation shows in the extend answer.
	h.cancel(j.ID)
	if got = h.extend(j, 0, nil); !got.CancelRequested || got.State != store.StateRunning {
		t.Errorf("extend after cancel: %s cancel_requested %v, want running with cancel requested", got.State, got.CancelRequested)
	}
}

func testSettleExtendHeartbeats(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	h.advance(time.Minute)
	h.extend(j, 0, nil)
	if w := h.workers()["w"]; w == nil {
		t.Error("the worker is not in WorkerList")
	} else {
		wantTime(t, "last_heartbeat_at after extend", w.LastHeartbeatAt, h.now())
	}
	h.advance(10 * time.Second)
	if o := h.orphans(h.now().Add(-store.DefaultDeadAfter)); len(o) != 0 {
		t.Errorf("a worker that extended 10s ago has orphans: %+v", o)
	}
}

func testSettleRelease(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	h.advance(time.Second)
	got := h.release(j, 0)
	for _, r := range []*store.Job{got, h.get(j.ID)} {
		wantState(t, r, store.StateAvailable, 0, 0)
		wantTime(t, "run_at (its place, kept)", r.RunAt, j.RunAt)
	}
	wantOutcome(t, h.get(j.ID), store.OutcomeReleased, h.now())
	again := h.leaseOne("w-2")
	if again.ID != j.ID || again.Attempt != 1 {
		t.Errorf("leased %s attempt %d, want the released job at attempt 1", again.ID, again.Attempt)
	}
}

func testSettleReleaseDelay(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	got := h.release(j, 30*time.Second)
	wantState(t, got, store.StateScheduled, 0, 0)
	wantTime(t, "run_at", got.RunAt, h.now().Add(30*time.Second))
	wantOutcome(t, h.get(j.ID), store.OutcomeReleased, h.now())
	if n := len(h.lease("w", 1)); n != 0 {
		t.Errorf("leased a job released with a delay")
	}
}

func testSettleAttempts(t *testing.T, h *harness) {
	j := h.enqueueOne(store.JobSpec{Kind: "k"})
	t1 := h.advance(time.Second)
	l := h.leaseOne("w-1")
	t2 := h.advance(2 * time.Second)
	h.fail(l, "boom")
	h.advance(time.Hour)
	h.promote()
	t3 := h.now()
	l = h.leaseOne("w-2")
	t4 := h.advance(time.Second)
	h.release(l, 0)
	t5 := h.advance(time.Second)
	l = h.leaseOne("w-3")
	t6 := h.advance(time.Second)
	h.ack(l)

	type entry struct {
		attempt           int
		worker            string
		started, finished time.Time
		outcome           store.Outcome
		err               string
	}
	want := []entry{
		{1, "w-1", t1, t2, store.OutcomeFailed, "boom"},
		{2, "w-2", t3, t4, store.OutcomeReleased, ""},
		{2, "w-3", t5, t6, store.OutcomeSucceeded, ""},
	}
	got := h.get(j.ID).Attempts
	if len(got) != len(want) {
		t.Fatalf("%d attempt entries, want %d: %+v", len(got), len(want), got)
	}
	seen := map[string]bool{}
	for i, w := range want {
		a := got[i]
		if a.Attempt != w.attempt || a.WorkerID != w.worker || a.Outcome != w.outcome || a.JobID != j.ID {
			t.Errorf("attempts[%d] = %d %q %s of %s, want %d %q %s of %s", i, a.Attempt, a.WorkerID, a.Outcome, a.JobID, w.attempt, w.worker, w.outcome, j.ID)
		}
		wantTime(t, "started_at", a.StartedAt, w.started)
		wantTimePtr(t, "finished_at", a.FinishedAt, w.finished)
		if got := deref(a.Error); (w.err == "" && got != nil) || (w.err != "" && got != w.err) {
			t.Errorf("attempts[%d].error = %v, want %q", i, got, w.err)
		}
		if a.RecoveredBy != nil || a.LastHeartbeatAt != nil {
			t.Errorf("attempts[%d] (%s) has recovery fields", i, a.Outcome)
		}
		if a.ID == "" || seen[a.ID] {
			t.Errorf("attempts[%d].id = %q, want a distinct id", i, a.ID)
		}
		seen[a.ID] = true
	}
}

func testSettleBatch(t *testing.T, h *harness) {
	h.enqueue(spec("k", ""), spec("k", ""), spec("k", ""), spec("k", ""))
	leased := h.lease("w", 4)
	if len(leased) != 4 {
		t.Fatalf("leased %d jobs, want 4", len(leased))
	}
	ackOK, ackStale, failOK, failStale := leased[0], leased[1], leased[2], leased[3]
	// ackStale's token goes stale: released and leased again.
	h.release(ackStale, 0)
	h.leaseOne("w-2")
	const unknown = "01950000-0000-7000-8000-000000000000"
	before := map[string]*store.Job{ackStale.ID: h.get(ackStale.ID), failStale.ID: h.get(failStale.ID)}
	now := h.advance(time.Second)
	errs, err := h.s.JobSettle(h.ctx, &store.JobSettleParams{
		Acks: []store.JobAckParams{
			{ID: ackOK.ID, Token: token(t, ackOK), Result: json.RawMessage(`1`), Now: now},
			{ID: ackStale.ID, Token: token(t, ackStale), Now: now},
			{ID: unknown, Token: token(t, ackOK), Now: now},
		},
		Fails: []store.JobFailParams{
			{ID: failOK.ID, Token: token(t, failOK), Error: "boom", Now: now},
			{ID: failStale.ID, Token: "garbage", Error: "boom", Now: now},
			{ID: unknown, Token: token(t, failOK), Error: "boom", Now: now},
		},
		Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantResults(t, errs, nil, store.ErrLeaseLost, store.ErrNotFound, nil, store.ErrLeaseLost, store.ErrNotFound)
	a := h.get(ackOK.ID)
	wantState(t, a, store.StateSucceeded, 1, 0)
	wantJSON(t, "result", a.Result, []byte(`1`))
	f := h.get(failOK.ID)
	wantState(t, f, store.StateScheduled, 1, 0)
	wantBackoff(t, f, now, time.Second)
	for id, b := range before {
		sameJob(t, b, h.get(id))
	}
}

// testSettleBatchRepeats: within one acks-only settle, an ack repeated
// under the same token is ok twice, and a stale token before the current
// one is refused while the current one settles.
func testSettleBatchRepeats(t *testing.T, h *harness) {
	h.enqueue(spec("k", ""), spec("k", ""))
	leased := h.lease("w", 2)
	if len(leased) != 2 {
		t.Fatalf("leased %d jobs, want 2", len(leased))
	}
	twice, relet := leased[0], leased[1]
	h.release(relet, 0)
	current := h.leaseOne("w-2")
	if current.ID != relet.ID {
		t.Fatalf("leased %s again, want %s", current.ID, relet.ID)
	}
	now := h.advance(time.Second)
	errs, err := h.s.JobSettle(h.ctx, &store.JobSettleParams{
		Acks: []store.JobAckParams{
			{ID: twice.ID, Token: token(t, twice), Now: now},
			{ID: relet.ID, Token: token(t, relet), Now: now},
			{ID: twice.ID, Token: token(t, twice), Now: now},
			{ID: current.ID, Token: token(t, current), Now: now},
		},
		Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantResults(t, errs, nil, store.ErrLeaseLost, nil, nil)
	wantState(t, h.get(twice.ID), store.StateSucceeded, 1, 0)
	wantState(t, h.get(current.ID), store.StateSucceeded, current.Attempt, 0)
	// Settled under the current token: a repeat of it is answered, the
	// stale one refused.
	if _, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: current.ID, Token: token(t, current), Now: h.now()}); err != nil {
		t.Errorf("ack repeated under the settling token: %v", err)
	}
	_, err = h.s.JobAck(h.ctx, &store.JobAckParams{ID: relet.ID, Token: token(t, relet), Now: h.now()})
	wantErr(t, "ack under the stale token", err, store.ErrLeaseLost)
}

// wantResults checks a settle's results, one per item (acks first): nil
// for ok, else the error each must be.
func wantResults(t *testing.T, errs []error, want ...error) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("%d results, want %d (one per item, acks first)", len(errs), len(want))
	}
	for i, w := range want {
		if w == nil && errs[i] != nil {
			t.Errorf("results[%d] = %v, want ok", i, errs[i])
		} else if w != nil {
			wantErr(t, fmt.Sprintf("results[%d]", i), errs[i], w)
		}
	}
}
