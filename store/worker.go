package store

import "time"

// Worker is a process that leases jobs. It lives while it heartbeats; a
// lease or an extend counts as a heartbeat.
type Worker struct {
	ID              string
	Queues          []string
	Labels          map[string]string
	StartedAt       time.Time
	LastHeartbeatAt time.Time
	InFlight        []string // ids of the running jobs it holds
}

// WorkerState is a worker's liveness as seen at some instant.
type WorkerState string

// Worker states.
const (
	WorkerLive    WorkerState = "live"
	WorkerSuspect WorkerState = "suspect"
	WorkerDead    WorkerState = "dead"
)

// Liveness defaults.
const (
	// DefaultHeartbeatInterval is how often workers are told to heartbeat.
	DefaultHeartbeatInterval = 5 * time.Second
	// DefaultDeadAfter is three intervals: one lost heartbeat is no death.
	DefaultDeadAfter = 15 * time.Second
)

// WorkerStateAt says whether a worker last heard from at last is live, suspect
// (more than two intervals late) or dead (silent for deadAfter) at now.
func WorkerStateAt(last, now time.Time, interval, deadAfter time.Duration) WorkerState {
	silent := now.Sub(last)
	switch {
	case silent >= deadAfter:
		return WorkerDead
	case silent > 2*interval:
		return WorkerSuspect
	default:
		return WorkerLive
	}
}
