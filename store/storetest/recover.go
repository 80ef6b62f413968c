package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var recoverTests = []test{
	{"ListOrphans", testRecoverListOrphans},
	{"ListOrphansLimit", testRecoverListOrphansLimit},
	{"Recover", testRecoverRecover},
	{"Racing", testRecoverRacing},
	{"StaleList", testRecoverStaleList},
	{"HeartbeatDuringRecovery", testRecoverHeartbeatDuring},
	{"MaxRescues", testRecoverMaxRescues},
	{"DefaultMaxRescues", testRecoverDefaultMaxRescues},
	{"AttemptsExhausted", testRecoverAttemptsExhausted},
	{"CancelRequested", testRecoverCancelRequested},
}

func testRecoverListOrphans(t *testing.T, h *harness) {
	t0 := h.now()
	silent := h.running("silent", spec("k", "a"))
	alive := h.running("alive", spec("k", "b"))
	node := h.running("node-1", spec("k", "c"))
	h.advance(10 * time.Second)
	h.heartbeat("alive")
	h.advance(10 * time.Second)

	deadBefore := t0.Add(5 * time.Second)
	got := h.orphans(deadBefore, "node-1")
	if len(got) != 1 {
		t.Fatalf("orphans = %+v, want only the silent worker's job", got)
	}
	o := got[0]
	if o.JobID != silent.ID || o.WorkerID != "silent" || o.Token != token(t, silent) {
		t.Errorf("orphan = %+v, want job %s of silent with its lease token", o, silent.ID)
	}
	wantTime(t, "orphan last_heartbeat_at", o.LastHeartbeatAt, t0)
	// Without the live list, the node's own job is an orphan too.
	wantSet(t, "orphans with no live ids", orphanIDs(h.orphans(deadBefore)), silent.ID, node.ID)
	// With a cut-off before the leases, nobody is dead yet.
	if got := h.orphans(t0.Add(-time.Second)); len(got) != 0 {
		t.Errorf("orphans dead before the leases = %+v, want none", got)
	}
	wantState(t, h.get(alive.ID), store.StateRunning, 1, 0)
}

func orphanIDs(os []store.Orphan) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.JobID
	}
	return out
}

func testRecoverListOrphansLimit(t *testing.T, h *harness) {
	for range 3 {
		h.enqueueOne(spec("k", ""))
	}
	h.lease("w", 3)
	h.advance(time.Minute)
	got, err := h.s.JobListOrphans(h.ctx, &store.JobListOrphansParams{DeadBefore: h.now(), Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("JobListOrphans with Limit 2 listed %d of 3", len(got))
	}
}

func testRecoverRecover(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	leasedAt := h.now()
	o := h.orphan(j)
	got := h.recover("node-1", []store.Orphan{o})
	if len(got) != 1 || got[0].ID != j.ID {
		t.Fatalf("recovered %q, want [%s]", ids(got), j.ID)
	}
	// Back at once, the attempt still counted, the rescue recorded.
	for _, r := range []*store.Job{got[0], h.get(j.ID)} {
		wantState(t, r, store.StateAvailable, 1, 1)
		wantTime(t, "run_at (its place, kept)", r.RunAt, j.RunAt)
		if r.DeadReason != nil || r.FinishedAt != nil {
			t.Errorf("recovered job has dead_reason %v finished_at %v", deref(r.DeadReason), deref(r.FinishedAt))
		}
	}
	r := h.get(j.ID)
	wantOutcome(t, r, store.OutcomeOrphaned, h.now())
	a := lastAttempt(t, r)
	if a.WorkerID != "w" || a.RecoveredBy == nil || *a.RecoveredBy != "node-1" {
		t.Errorf("orphaned attempt of %q recovered by %v, want w recovered by node-1", a.WorkerID, deref(a.RecoveredBy))
	}
	wantTimePtr(t, "attempt last_heartbeat_at", a.LastHeartbeatAt, leasedAt)

	_, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: token(t, j), Now: h.now()})
	wantErr(t, "ack with the orphaned token", err, store.ErrLeaseLost)
	if again := h.leaseOne("w-2"); again.ID != j.ID || again.Attempt != 2 || again.Rescues != 1 {
		t.Errorf("leased %s attempt %d rescues %d, want the rescued job at attempt 2", again.ID, again.Attempt, again.Rescues)
	}
	if o := h.orphans(h.now().Add(-store.DefaultDeadAfter)); len(o) != 0 {
		t.Errorf("orphans after the rescue and a fresh lease: %+v", o)
	}
}

// testRecoverRacing has two nodes recover the same orphan list at once,
// round after round: the compare-and-set lets exactly one win each job.
func testRecoverRacing(t *testing.T, h *harness) {
	const rounds, perRound = 20, 5
	for round := range rounds {
		queue := fmt.Sprintf("race-%d", round)
		for range perRound {
			h.enqueueOne(spec("k", queue))
		}
		leased := h.lease("w-"+queue, perRound, queue)
		h.advance(time.Minute)
		orphans := h.orphans(h.now().Add(-store.DefaultDeadAfter))
		wantSet(t, "orphans", orphanIDs(orphans), ids(leased)...)

		won, err := recoverConcurrently(h, orphans, "node-a", "node-b")
		if err != nil {
			t.Fatalf("round %d: JobRecover: %v", round, err)
		}
		if total := sumValues(won); total != len(orphans) {
			t.Errorf("round %d: the nodes recovered %d jobs in all, want the %d orphans", round, total, len(orphans))
		}
		for _, l := range leased {
			if won[l.ID] != 1 {
				t.Errorf("round %d: job %s recovered %d times, want once", round, l.ID, won[l.ID])
			}
			j := h.get(l.ID)
			wantState(t, j, store.StateAvailable, 1, 1)
			orphaned := 0
			for _, a := range j.Attempts {
				if a.Outcome == store.OutcomeOrphaned {
					orphaned++
				}
			}
			if orphaned != 1 {
				t.Errorf("round %d: job %s has %d orphaned attempt entries, want 1", round, l.ID, orphaned)
			}
		}
		if t.Failed() {
			return
		}
	}
}

// recoverConcurrently has each node recover the same orphans at once and
// counts how often each job was won.
func recoverConcurrently(h *harness, orphans []store.Orphan, nodes ...string) (map[string]int, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		won   = map[string]int{}
		errs  []error
		start = make(chan struct{})
	)
	for _, node := range nodes {
		wg.Go(func() {
			<-start
			got, err := h.s.JobRecover(h.ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: node, Now: h.now()})
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
			for _, j := range got {
				won[j.ID]++
			}
		})
	}
	close(start)
	wg.Wait()
	return won, errors.Join(errs...)
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// testRecoverStaleList: between one node's listing and its recovery,
// another node rescued the job and a worker leased it again. The stale
// listing's token no longer matches, so the second recovery takes nothing,
// even when the new lease is held by the same worker id (a worker
// restarted under its old name): the token, not the owner, fences it.
func testRecoverStaleList(t *testing.T, h *harness) {
	for _, next := range []string{"w-2", "w-1"} {
		queue := "q-" + next
		j := h.running("w-1", spec("k", queue))
		o := h.orphan(j)
		if got := h.recover("node-a", []store.Orphan{o}); len(got) != 1 {
			t.Fatalf("node-a recovered %d jobs, want 1", len(got))
		}
		h.leaseOne(next, queue)
		before := h.get(j.ID)
		if got := h.recover("node-b", []store.Orphan{o}); len(got) != 0 {
			t.Errorf("node-b recovered %q with a stale listing after %s leased it again, want nothing", ids(got), next)
		}
		after := h.get(j.ID)
		sameJob(t, before, after)
		if after.Lease == nil || after.Lease.WorkerID != next {
			t.Errorf("lease after the stale recovery = %+v, want %s's", after.Lease, next)
		}
	}
}

// testRecoverHeartbeatDuring: the owner heartbeats after its job was
// listed as an orphan but before the recovery. The CAS is on (id, owner,
// token, running), not on liveness, and the token has not changed, so the
// recovery still wins: the listing decided. The worker learns of it in the
// lost list of its next heartbeat and can no longer settle the job.
func testRecoverHeartbeatDuring(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	o := h.orphan(j)
	if res := h.heartbeat("w", j.ID); len(res.Lost) != 0 {
		t.Errorf("heartbeat before the recovery lost %q, want nothing", res.Lost)
	}
	if got := h.recover("node-1", []store.Orphan{o}); len(got) != 1 {
		t.Fatalf("recovered %d jobs after the owner's heartbeat, want 1 (the listing decides)", len(got))
	}
	wantState(t, h.get(j.ID), store.StateAvailable, 1, 1)
	h.advance(time.Second)
	wantSet(t, "lost after the recovery", h.heartbeat("w", j.ID).Lost, j.ID)
	_, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: token(t, j), Now: h.now()})
	wantErr(t, "ack after the recovery", err, store.ErrLeaseLost)
}

// rescue leases the job as a new worker and recovers it once it is an
// orphan, with maxRescues.
func (h *harness) rescue(id string, worker string, maxRescues int) *store.Job {
	h.t.Helper()
	l := h.leaseOne(worker)
	if l.ID != id {
		h.t.Fatalf("leased %s, want %s", l.ID, id)
	}
	got := h.recoverMax("node-1", []store.Orphan{h.orphan(l)}, maxRescues)
	if len(got) != 1 {
		h.t.Fatalf("recovered %d jobs, want 1", len(got))
	}
	return got[0]
}

func testRecoverMaxRescues(t *testing.T, h *harness) {
	j := h.enqueueOne(spec("k", ""))
	got := h.rescue(j.ID, "w-1", 2)
	wantState(t, got, store.StateAvailable, 1, 1)
	got = h.rescue(j.ID, "w-2", 2)
	wantState(t, got, store.StateDead, 2, 2)
	wantDead(t, h.get(j.ID), store.DeadCrashLoop, h.now())
	wantOutcome(t, h.get(j.ID), store.OutcomeOrphaned, h.now())
}

func testRecoverDefaultMaxRescues(t *testing.T, h *harness) {
	j := h.enqueueOne(spec("k", ""))
	for i := 1; i < store.DefaultMaxRescues; i++ {
		got := h.rescue(j.ID, fmt.Sprintf("w-%d", i), 0)
		wantState(t, got, store.StateAvailable, i, i)
	}
	got := h.rescue(j.ID, "w-last", 0)
	wantState(t, got, store.StateDead, store.DefaultMaxRescues, store.DefaultMaxRescues)
	wantDead(t, got, store.DeadCrashLoop, h.now())
}

func testRecoverAttemptsExhausted(t *testing.T, h *harness) {
	j := h.enqueueOne(store.JobSpec{Kind: "k", MaxAttempts: 1})
	got := h.rescue(j.ID, "w", 0)
	wantState(t, got, store.StateDead, 1, 1)
	wantDead(t, h.get(j.ID), store.DeadAttemptsExhausted, h.now())
	wantOutcome(t, h.get(j.ID), store.OutcomeOrphaned, h.now())
}

func testRecoverCancelRequested(t *testing.T, h *harness) {
	j := h.running("w", spec("k", ""))
	h.cancel(j.ID)
	got := h.recover("node-1", []store.Orphan{h.orphan(j)})
	if len(got) != 1 {
		t.Fatalf("recovered %d jobs, want 1", len(got))
	}
	r := h.get(j.ID)
	wantState(t, r, store.StateCancelled, 1, 1)
	wantTimePtr(t, "finished_at", r.FinishedAt, h.now())
	wantOutcome(t, r, store.OutcomeCancelled, h.now())
}
