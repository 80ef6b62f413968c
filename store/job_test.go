package store

import (
	"testing"
	"time"
)

func TestJobRetryingAt(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		state   State
		attempt int
		runAt   time.Duration // run_at − now
		want    bool
	}{
		{StateScheduled, 1, time.Minute, true},      // waiting out a backoff
		{StateScheduled, 0, time.Minute, false},     // delayed, never tried
		{StateScheduled, 3, 0, false},               // due: reads available
		{StateScheduled, 3, -time.Second, false},    // due, not promoted yet
		{StateAvailable, 2, -time.Second, false},    // promoted
		{StateRunning, 2, -time.Minute, false},      // on its next delivery
		{StateDead, 20, -time.Minute, false},        // out of attempts
		{StateCancelled, 1, time.Minute, false},     // cancelled while waiting
		{StateScheduled, 1, time.Millisecond, true}, // due in a moment
	}
	for _, tt := range tests {
		j := &Job{State: tt.state, Attempt: tt.attempt, RunAt: now.Add(tt.runAt)}
		if got := j.RetryingAt(now); got != tt.want {
			t.Errorf("%s, attempt %d, run_at now%+v: RetryingAt = %v, want %v", tt.state, tt.attempt, tt.runAt, got, tt.want)
		}
	}
}
