package store

import (
	"testing"
	"time"
)

func TestWorkerStateAt(t *testing.T) {
	last := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		silent time.Duration // now − last
		want   WorkerState
	}{
		{0, WorkerLive},
		{-time.Second, WorkerLive}, // last in the future: skewed clocks
		{5 * time.Second, WorkerLive},
		{10 * time.Second, WorkerLive}, // exactly two intervals: not yet late
		{10*time.Second + time.Millisecond, WorkerSuspect},
		{15*time.Second - time.Millisecond, WorkerSuspect},
		{15 * time.Second, WorkerDead}, // dead_after reached
		{time.Hour, WorkerDead},
	}
	for _, tt := range tests {
		got := WorkerStateAt(last, last.Add(tt.silent), DefaultHeartbeatInterval, DefaultDeadAfter)
		if got != tt.want {
			t.Errorf("WorkerStateAt after %s of silence = %s, want %s", tt.silent, got, tt.want)
		}
	}
	// A short dead_after wins over the suspect band.
	if got := WorkerStateAt(last, last.Add(3*time.Second), 5*time.Second, 2*time.Second); got != WorkerDead {
		t.Errorf("StateAt with dead_after 2s after 3s = %s, want dead", got)
	}
}
