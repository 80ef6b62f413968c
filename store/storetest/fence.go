package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var fencingTests = []test{
	{"StaleTokenAfterRelease", testFencingStaleAfterRelease},
	{"StaleTokenAfterRecover", testFencingStaleAfterRecover},
	{"ForeignToken", testFencingForeignToken},
	{"GarbageToken", testFencingGarbageToken},
	{"NotRunning", testFencingNotRunning},
	{"UnknownID", testFencingUnknownID},
	{"AckRepeated", testFencingAckRepeated},
	{"AfterFail", testFencingAfterFail},
	{"AfterAck", testFencingAfterAck},
	{"AckRacesRecover", testFencingAckRacesRecover},
}

// settleOps are the four calls that present a lease token.
var settleOps = []struct {
	name string
	call func(h *harness, id, token string) error
}{
	{"ack", func(h *harness, id, token string) error {
		_, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: id, Token: token, Now: h.now()})
		return err
	}},
	{"fail", func(h *harness, id, token string) error {
		_, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: id, Token: token, Error: "stale", Now: h.now()})
		return err
	}},
	{"extend", func(h *harness, id, token string) error {
		_, err := h.s.JobExtend(h.ctx, &store.JobExtendParams{ID: id, Token: token, Progress: ptr(50), Now: h.now()})
		return err
	}},
	{"release", func(h *harness, id, token string) error {
		_, err := h.s.JobRelease(h.ctx, &store.JobReleaseParams{ID: id, Token: token, Now: h.now()})
		return err
	}},
}

// wantFenced checks that every settle call on id with tok is refused with
// ErrLeaseLost and leaves the job as it was, but for the calls named in
// repeats: a repeat of the call that ended the delivery is answered.
func wantFenced(t *testing.T, h *harness, id, tok, why string, repeats ...string) {
	t.Helper()
	for _, op := range settleOps {
		if slices.Contains(repeats, op.name) {
			continue
		}
		before := h.get(id)
		err := op.call(h, id, tok)
		wantErr(t, fmt.Sprintf("%s with %s", op.name, why), err, store.ErrLeaseLost)
		sameJob(t, before, h.get(id))
	}
}

func testFencingStaleAfterRelease(t *testing.T, h *harness) {
	first := h.running("w-1", spec("k", ""))
	h.release(first, 0)
	// Stale while available (but for a repeated release, which is
	// answered), then while re-leased to someone else.
	wantFenced(t, h, first.ID, token(t, first), "the token of a released lease", "release")
	h.leaseOne("w-2")
	wantFenced(t, h, first.ID, token(t, first), "the token of a released lease")
}

func testFencingStaleAfterRecover(t *testing.T, h *harness) {
	first := h.running("w-1", spec("k", ""))
	if got := h.recover("node-1", []store.Orphan{h.orphan(first)}); len(got) != 1 {
		t.Fatalf("recovered %d jobs, want 1", len(got))
	}
	wantFenced(t, h, first.ID, token(t, first), "the token of a recovered lease")
	h.leaseOne("w-2")
	wantFenced(t, h, first.ID, token(t, first), "the token of a recovered lease")
}

func testFencingForeignToken(t *testing.T, h *harness) {
	a := h.running("w-1", spec("k", "a"))
	b := h.running("w-2", spec("k", "b"))
	wantFenced(t, h, a.ID, token(t, b), "another job's token")
	wantFenced(t, h, b.ID, token(t, a), "another job's token")
}

func testFencingGarbageToken(t *testing.T, h *harness) {
	j := h.running("w-1", spec("k", ""))
	for _, tok := range []string{"", "garbage", "00000000000000000000000000000000", token(t, j) + "0"} {
		wantFenced(t, h, j.ID, tok, fmt.Sprintf("token %q", tok))
	}
}

func testFencingNotRunning(t *testing.T, h *harness) {
	// A job that was never leased has no token to match.
	avail := h.enqueueOne(spec("k", "a"))
	wantFenced(t, h, avail.ID, "garbage", "a token on an available job")
}

func testFencingUnknownID(t *testing.T, h *harness) {
	j := h.running("w-1", spec("k", ""))
	// A well-formed id of no job, and a malformed one.
	for _, id := range []string{"01950000-0000-7000-8000-000000000000", "not-a-uuid"} {
		for _, op := range settleOps {
			wantErr(t, fmt.Sprintf("%s of %q", op.name, id), op.call(h, id, token(t, j)), store.ErrNotFound)
		}
		_, err := h.s.JobGet(h.ctx, &store.JobGetParams{ID: id, Now: h.now()})
		wantErr(t, fmt.Sprintf("JobGet(%q)", id), err, store.ErrNotFound)
	}
	wantState(t, h.get(j.ID), store.StateRunning, 1, 0)
}

func testFencingAckRepeated(t *testing.T, h *harness) {
	j := h.running("w-1", spec("k", ""))
	first := h.ack(j)
	finished := h.now()
	h.advance(5 * time.Second)
	again, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: token(t, j), Now: h.now()})
	if err != nil {
		t.Fatalf("repeated ack: %v", err)
	}
	if again.ID != j.ID || again.State != store.StateSucceeded {
		t.Errorf("repeated ack returned %s %s, want the succeeded job", again.ID, again.State)
	}
	wantTimePtr(t, "finished_at after a repeated ack", again.FinishedAt, finished)
	wantState(t, first, store.StateSucceeded, 1, 0)
	if n := len(h.get(j.ID).Attempts); n != 1 {
		t.Errorf("%d attempt entries after a repeated ack, want 1", n)
	}
	// Only the token that settled it: an ack under any other is stale.
	other := h.running("w-2", spec("k", "other"))
	for _, tok := range []string{"garbage", token(t, other)} {
		before := h.get(j.ID)
		_, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: tok, Now: h.now()})
		wantErr(t, "ack of a succeeded job under another token", err, store.ErrLeaseLost)
		sameJob(t, before, h.get(j.ID))
	}
}

func testFencingAfterFail(t *testing.T, h *harness) {
	// A fail to retry, and a fail to dead: neither can be acked after.
	retried := h.running("w-1", spec("k", "a"))
	h.fail(retried, "boom")
	dead := h.running("w-1", spec("k", "b"))
	if _, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: dead.ID, Token: token(t, dead), Error: "x", NoRetry: true, Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	for _, j := range []*store.Job{retried, dead} {
		before := h.get(j.ID)
		_, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: token(t, j), Now: h.now()})
		wantErr(t, "ack after a fail to "+string(before.State)+" under the same token", err, store.ErrLeaseLost)
		sameJob(t, before, h.get(j.ID))
	}
}

func testFencingAfterAck(t *testing.T, h *harness) {
	j := h.running("w-1", spec("k", ""))
	h.ack(j)
	// Only an identical ack is idempotent; anything else is a stale holder.
	for _, op := range settleOps[1:] {
		before := h.get(j.ID)
		wantErr(t, op.name+" after ack under the same token", op.call(h, j.ID, token(t, j)), store.ErrLeaseLost)
		sameJob(t, before, h.get(j.ID))
	}
}

// testFencingAckRacesRecover races a worker's ack against a node's
// recovery of the same job: exactly one of them wins, and the job ends the
// way the winner left it.
func testFencingAckRacesRecover(t *testing.T, h *harness) {
	for round := range 20 {
		queue := fmt.Sprintf("race-%d", round)
		j := h.running("w-"+queue, spec("k", queue))
		o := h.orphan(j)
		var (
			wg        sync.WaitGroup
			ackErr    error
			recovered []*store.Job
			recErr    error
			start     = make(chan struct{})
		)
		wg.Go(func() {
			<-start
			_, ackErr = h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: o.Token, Now: h.now()})
		})
		wg.Go(func() {
			<-start
			recovered, recErr = h.s.JobRecover(h.ctx, &store.JobRecoverParams{Orphans: []store.Orphan{o}, NodeID: "node-1", Now: h.now()})
		})
		close(start)
		wg.Wait()
		if recErr != nil {
			t.Fatalf("round %d: JobRecover: %v", round, recErr)
		}
		got := h.get(j.ID)
		switch {
		case ackErr == nil && len(recovered) == 0:
			wantState(t, got, store.StateSucceeded, 1, 0)
		case errors.Is(ackErr, store.ErrLeaseLost) && len(recovered) == 1:
			wantState(t, got, store.StateAvailable, 1, 1)
		default:
			t.Fatalf("round %d: ack error %v and %d recovered; want exactly one winner", round, ackErr, len(recovered))
		}
	}
}
