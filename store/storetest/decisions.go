package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// decisionTests walk the failure-decision table of API.md row by row
// through the store: each row leases a job, ends the delivery one way and
// checks the job's next state, counters and the attempt's outcome.
var decisionTests []test

// decisionRows are the table's rows, in its order.
var decisionRows = []struct {
	name   string
	spec   store.JobSpec // Kind is filled in
	cancel bool          // request cancellation before the end
	end    func(h *harness, j *store.Job)

	state       store.State
	reason      store.DeadReason // "" unless dead
	outcome     store.Outcome
	attempt     int // after the decision
	rescues     int
	runAtOffset time.Duration // run_at − the end, for available and scheduled
}{
	{"Release", store.JobSpec{}, false, endRelease(0),
		store.StateAvailable, "", store.OutcomeReleased, 0, 0, 0},
	{"ReleaseDelay", store.JobSpec{}, false, endRelease(time.Minute),
		store.StateScheduled, "", store.OutcomeReleased, 0, 0, time.Minute},
	{"CancelRequestedFail", store.JobSpec{}, true, endFail(false),
		store.StateCancelled, "", store.OutcomeCancelled, 1, 0, 0},
	{"CancelRequestedFailPermanently", store.JobSpec{}, true, endFail(true),
		store.StateCancelled, "", store.OutcomeCancelled, 1, 0, 0},
	{"CancelRequestedTimedOut", store.JobSpec{}, true, endTimeout,
		store.StateCancelled, "", store.OutcomeCancelled, 1, 0, 0},
	{"CancelRequestedOrphaned", store.JobSpec{}, true, endOrphan(0),
		store.StateCancelled, "", store.OutcomeCancelled, 1, 1, 0},
	{"FailPermanently", store.JobSpec{}, false, endFail(true),
		store.StateDead, store.DeadFailedPermanently, store.OutcomeFailed, 1, 0, 0},
	{"OrphanedCrashLoop", store.JobSpec{}, false, endOrphan(1),
		store.StateDead, store.DeadCrashLoop, store.OutcomeOrphaned, 1, 1, 0},
	{"OrphanedCrashLoopBeforeAttempts", store.JobSpec{MaxAttempts: 1}, false, endOrphan(1),
		store.StateDead, store.DeadCrashLoop, store.OutcomeOrphaned, 1, 1, 0},
	{"OrphanedAttemptsExhausted", store.JobSpec{MaxAttempts: 1}, false, endOrphan(0),
		store.StateDead, store.DeadAttemptsExhausted, store.OutcomeOrphaned, 1, 1, 0},
	{"OrphanedAvailable", store.JobSpec{MaxAttempts: 2}, false, endOrphan(0),
		store.StateAvailable, "", store.OutcomeOrphaned, 1, 1, 0},
	{"TimedOutDead", store.JobSpec{MaxAttempts: 1}, false, endTimeout,
		store.StateDead, store.DeadTimeoutExhausted, store.OutcomeTimedOut, 1, 0, 0},
	{"TimedOutScheduled", store.JobSpec{MaxAttempts: 2}, false, endTimeout,
		store.StateScheduled, "", store.OutcomeTimedOut, 1, 0, time.Minute},
	{"FailDead", store.JobSpec{MaxAttempts: 1}, false, endFail(false),
		store.StateDead, store.DeadAttemptsExhausted, store.OutcomeFailed, 1, 0, 0},
	{"FailScheduled", store.JobSpec{MaxAttempts: 2}, false, endFail(false),
		store.StateScheduled, "", store.OutcomeFailed, 1, 0, time.Minute},
}

func init() {
	for _, row := range decisionRows {
		decisionTests = append(decisionTests, test{row.name, func(t *testing.T, h *harness) {
			sp := row.spec
			sp.Kind = "k"
			sp.Timeout = time.Hour
			// A fixed backoff makes the retry's run_at exact (±10 %).
			sp.Backoff = store.Backoff{Base: time.Minute, Max: time.Minute}
			j := h.running("w", sp)
			if row.cancel {
				h.cancel(j.ID)
			}
			// The end comes later than the run_at, so a decision's run_at
			// (now for available) is told apart from the old one.
			h.advance(time.Second)
			row.end(h, j)
			got := h.get(j.ID)
			wantState(t, got, row.state, row.attempt, row.rescues)
			wantOutcome(t, got, row.outcome, h.now())
			switch {
			case row.reason != "":
				wantDead(t, got, row.reason, h.now())
			case got.DeadReason != nil:
				t.Errorf("dead_reason = %s, want none", *got.DeadReason)
			}
			switch row.state {
			case store.StateScheduled:
				if row.outcome == store.OutcomeReleased {
					wantTime(t, "run_at", got.RunAt, h.now().Add(row.runAtOffset))
				} else {
					wantBackoff(t, got, h.now(), row.runAtOffset)
				}
			case store.StateAvailable:
				// A rescue or a release keeps the job's place in the
				// queue; a failure retried at once waits from now.
				want := h.now()
				if row.outcome == store.OutcomeOrphaned || row.outcome == store.OutcomeReleased {
					want = j.RunAt
				}
				wantTime(t, "run_at", got.RunAt, want)
			case store.StateCancelled:
				wantTimePtr(t, "finished_at", got.FinishedAt, h.now())
			}
		}})
	}
}

func endRelease(delay time.Duration) func(h *harness, j *store.Job) {
	return func(h *harness, j *store.Job) { h.release(j, delay) }
}

func endFail(permanently bool) func(h *harness, j *store.Job) {
	return func(h *harness, j *store.Job) {
		h.t.Helper()
		_, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(h.t, j), Error: "boom", NoRetry: permanently, Now: h.now()})
		if err != nil {
			h.t.Fatalf("JobFail: %v", err)
		}
	}
}

func endTimeout(h *harness, j *store.Job) {
	h.t.Helper()
	h.advance(j.Timeout + time.Second)
	if got := h.reap(); len(got) != 1 {
		h.t.Fatalf("reaped %d jobs, want 1", len(got))
	}
}

func endOrphan(maxRescues int) func(h *harness, j *store.Job) {
	return func(h *harness, j *store.Job) {
		h.t.Helper()
		if got := h.recoverMax("node-1", []store.Orphan{h.orphan(j)}, maxRescues); len(got) != 1 {
			h.t.Fatalf("recovered %d jobs, want 1", len(got))
		}
	}
}
