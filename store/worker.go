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

// StateAt says whether a worker last heard from at last is live, suspect
// (more than two intervals late) or dead (silent for deadAfter) at now.
func StateAt(last, now time.Time, interval, deadAfter time.Duration) WorkerState {
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

// Queue is a queue's counts by state, as of the read.
type Queue struct {
	Name   string
	Paused bool
	Counts map[State]int64
	// Retrying counts the scheduled jobs with attempt > 0.
	Retrying int64
	// OldestAvailableAt is the run_at of the oldest available job, if any.
	OldestAvailableAt *time.Time
}

// Orphan is a running job whose owner is silent: a candidate for recovery.
type Orphan struct {
	JobID    string
	WorkerID string
	Token    string
	// LastHeartbeatAt is the owner's last sign of life; zero if the owner
	// never registered.
	LastHeartbeatAt time.Time
}

// Stats are totals across queues.
type Stats struct {
	Jobs         map[State]int64
	RescuesTotal int64
}

// ZeroCounts returns a count of 0 for every state: where a queue's, or the
// store's, counts start, so every state is always present.
func ZeroCounts() map[State]int64 {
	m := make(map[State]int64, len(States))
	for _, s := range States {
		m[s] = 0
	}
	return m
}

// QueueNamed picks name out of queues; a queue with no jobs is not listed,
// so it is returned empty, with paused as just set.
func QueueNamed(queues []*Queue, name string, paused bool) *Queue {
	for _, q := range queues {
		if q.Name == name {
			return q
		}
	}
	return &Queue{Name: name, Paused: paused, Counts: ZeroCounts()}
}
