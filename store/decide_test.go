package store

import (
	"testing"
	"time"
)

var decideNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestDecide walks API.md's failure-decision table row by row, in its order.
func TestDecide(t *testing.T) {
	backoff := Backoff{Base: 10 * time.Second, Max: time.Hour}
	dur := func(d time.Duration) *time.Duration { return &d }
	const backoffRow = -1 // want: scheduled after BackoffDelay(attempt)
	const keptRow = -2    // want: the job's own run_at, its place in the queue
	place := decideNow.Add(-time.Hour)
	tests := []struct {
		name string
		// facts
		ending               Ending
		attempt, maxAttempts int
		rescues, maxRescues  int
		cancel               bool
		retryIn              *time.Duration
		// decision
		state       State
		reason      DeadReason // "" when not dead
		outcome     Outcome
		wantAttempt int
		wantRescues int
		delay       time.Duration // run_at − now; backoffRow for a backoff window
	}{
		// release / deregister: attempt − 1, available or scheduled after delay_ms
		{"release", EndRelease, 3, 20, 0, 0, false, nil, StateAvailable, "", OutcomeReleased, 2, 0, keptRow},
		{"release delay", EndRelease, 3, 20, 0, 0, false, dur(time.Minute), StateScheduled, "", OutcomeReleased, 2, 0, time.Minute},
		{"release zero delay", EndRelease, 1, 20, 0, 0, false, dur(0), StateAvailable, "", OutcomeReleased, 0, 0, keptRow},
		// Cancel is honoured by release: the job ends cancelled, not back in the queue.
		{"release cancel requested", EndRelease, 1, 20, 0, 0, true, nil, StateCancelled, "", OutcomeCancelled, 0, 0, 0},
		{"release last attempt", EndRelease, 20, 20, 4, 5, false, nil, StateAvailable, "", OutcomeReleased, 19, 4, keptRow},

		// any end while cancel_requested: cancelled
		{"cancel fail", EndFail, 1, 20, 0, 0, true, nil, StateCancelled, "", OutcomeCancelled, 1, 0, 0},
		{"cancel fail permanently", EndFailPermanent, 1, 20, 0, 0, true, nil, StateCancelled, "", OutcomeCancelled, 1, 0, 0},
		{"cancel timed out", EndTimedOut, 20, 20, 0, 0, true, nil, StateCancelled, "", OutcomeCancelled, 20, 0, 0},
		{"cancel orphaned counts the rescue", EndOrphaned, 1, 20, 4, 5, true, nil, StateCancelled, "", OutcomeCancelled, 1, 5, 0},

		// fail with retry: false
		{"fail permanently", EndFailPermanent, 1, 20, 0, 0, false, nil, StateDead, DeadFailedPermanently, OutcomeFailed, 1, 0, 0},
		{"fail permanently ignores retry_in", EndFailPermanent, 1, 20, 0, 0, false, dur(time.Minute), StateDead, DeadFailedPermanently, OutcomeFailed, 1, 0, 0},

		// orphaned: rescues + 1; crash_loop, else attempts_exhausted, else available at once
		{"orphaned", EndOrphaned, 1, 20, 0, 0, false, nil, StateAvailable, "", OutcomeOrphaned, 1, 1, keptRow},
		{"orphaned no backoff", EndOrphaned, 7, 20, 3, 0, false, nil, StateAvailable, "", OutcomeOrphaned, 7, 4, keptRow},
		{"orphaned default max rescues", EndOrphaned, 5, 20, 4, 0, false, nil, StateDead, DeadCrashLoop, OutcomeOrphaned, 5, 5, 0},
		{"orphaned max rescues", EndOrphaned, 2, 20, 1, 2, false, nil, StateDead, DeadCrashLoop, OutcomeOrphaned, 2, 2, 0},
		{"orphaned below max rescues", EndOrphaned, 2, 20, 1, 3, false, nil, StateAvailable, "", OutcomeOrphaned, 2, 2, keptRow},
		{"orphaned crash loop before attempts", EndOrphaned, 20, 20, 4, 5, false, nil, StateDead, DeadCrashLoop, OutcomeOrphaned, 20, 5, 0},
		{"orphaned attempts exhausted", EndOrphaned, 20, 20, 0, 0, false, nil, StateDead, DeadAttemptsExhausted, OutcomeOrphaned, 20, 1, 0},

		// timed out: timeout_exhausted, else backoff
		{"timed out", EndTimedOut, 3, 20, 2, 0, false, nil, StateScheduled, "", OutcomeTimedOut, 3, 2, backoffRow},
		{"timed out exhausted", EndTimedOut, 20, 20, 0, 0, false, nil, StateDead, DeadTimeoutExhausted, OutcomeTimedOut, 20, 0, 0},

		// fail: attempts_exhausted, else retry_in or backoff
		{"fail", EndFail, 1, 20, 0, 0, false, nil, StateScheduled, "", OutcomeFailed, 1, 0, backoffRow},
		{"fail retry_in", EndFail, 1, 20, 0, 0, false, dur(5 * time.Minute), StateScheduled, "", OutcomeFailed, 1, 0, 5 * time.Minute},
		{"fail retry_in zero", EndFail, 1, 20, 0, 0, false, dur(0), StateAvailable, "", OutcomeFailed, 1, 0, 0},
		{"fail exhausted", EndFail, 20, 20, 0, 0, false, nil, StateDead, DeadAttemptsExhausted, OutcomeFailed, 20, 0, 0},
		{"fail exhausted beats retry_in", EndFail, 3, 3, 0, 0, false, dur(time.Minute), StateDead, DeadAttemptsExhausted, OutcomeFailed, 3, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(DecideParams{
				Ending: tt.ending, Attempt: tt.attempt, MaxAttempts: tt.maxAttempts,
				Rescues: tt.rescues, MaxRescues: tt.maxRescues, CancelRequested: tt.cancel,
				Backoff: backoff, RetryIn: tt.retryIn, RunAt: place, Now: decideNow,
			})
			if d.State != tt.state || d.Outcome != tt.outcome || d.Attempt != tt.wantAttempt || d.Rescues != tt.wantRescues {
				t.Errorf("Decide = %s/%s attempt %d rescues %d, want %s/%s %d %d",
					d.State, d.Outcome, d.Attempt, d.Rescues, tt.state, tt.outcome, tt.wantAttempt, tt.wantRescues)
			}
			switch {
			case tt.reason == "" && d.DeadReason != nil:
				t.Errorf("dead reason = %s, want none", *d.DeadReason)
			case tt.reason != "" && (d.DeadReason == nil || *d.DeadReason != tt.reason):
				t.Errorf("dead reason = %v, want %s", d.DeadReason, tt.reason)
			}
			if tt.state != StateAvailable && tt.state != StateScheduled {
				return
			}
			delay := d.RunAt.Sub(decideNow)
			if tt.delay == keptRow {
				if !d.RunAt.Equal(place) {
					t.Errorf("run_at = now + %s, want the job's own (now - 1h): it keeps its place", delay)
				}
			} else if tt.delay == backoffRow {
				wantJitter(t, delay, backoff.Base<<(tt.attempt-1))
			} else if delay != tt.delay {
				t.Errorf("run_at = now + %s, want now + %s", delay, tt.delay)
			}
		})
	}
}

// wantJitter checks that got is d ±10 %.
func wantJitter(t *testing.T, got, d time.Duration) {
	t.Helper()
	lo, hi := time.Duration(float64(d)*0.9), time.Duration(float64(d)*1.1)
	if got < lo || got > hi {
		t.Errorf("delay %s, want %s ±10%% [%s, %s]", got, d, lo, hi)
	}
}

func TestBackoffDelay(t *testing.T) {
	tests := []struct {
		backoff Backoff
		n       int           // the attempt that ended
		want    time.Duration // before jitter
	}{
		{Backoff{time.Second, time.Hour}, 1, time.Second},
		{Backoff{time.Second, time.Hour}, 2, 2 * time.Second},
		{Backoff{time.Second, time.Hour}, 3, 4 * time.Second},
		{Backoff{time.Second, time.Hour}, 12, 2048 * time.Second},
		{Backoff{time.Second, time.Hour}, 13, time.Hour}, // 4096 s capped
		{Backoff{time.Second, time.Hour}, 1000, time.Hour},
		{Backoff{time.Second, time.Hour}, 0, time.Second},
		{Backoff{10 * time.Second, 25 * time.Second}, 3, 25 * time.Second},
		{Backoff{7 * 24 * time.Hour, 7 * 24 * time.Hour}, 1000, 7 * 24 * time.Hour},
		{Backoff{}, 1, DefaultBackoffBase},
		// A zero Max caps at the base (unlike Normalize, which reads it as
		// DefaultBackoffMax); stored jobs are always normalized.
		{Backoff{}, 3, DefaultBackoffBase},
		{Backoff{time.Minute, time.Second}, 5, time.Minute}, // max below base: base
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 200 {
				got := BackoffDelay(tt.backoff, tt.n)
				wantJitter(t, got, tt.want)
				seen[got] = true
			}
			// Jitter spreads retries: 200 draws are not all one value.
			if len(seen) < 2 {
				t.Errorf("BackoffDelay(%+v, %d) gave one value 200 times: no jitter", tt.backoff, tt.n)
			}
			if t.Failed() {
				t.Logf("backoff %+v, attempt %d", tt.backoff, tt.n)
			}
		})
	}
}
