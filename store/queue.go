package store

import "time"

// Queue is a queue's counts by state, as of the read.
type Queue struct {
	Name   string
	Paused bool
	Counts map[State]int64
	// Retrying counts the scheduled jobs with attempt > 0.
	Retrying int64
	// OldestAvailableAt is the run_at of the oldest available job, if any.
	OldestAvailableAt *time.Time
	// Limits are the queue's flow control; nil: none.
	Limits *Limits
	// Throttled counts the leases each limit held back a job of the queue
	// from, since its limits were first set; absent reasons are 0.
	Throttled map[ThrottleReason]int64
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

// QueueLimited picks name out of queues after its limits were set to
// limits (nil: cleared): a queue without jobs, pause or limits is not
// listed, so it is returned empty.
func QueueLimited(queues []*Queue, name string, limits *Limits) *Queue {
	for _, q := range queues {
		if q.Name == name {
			return q
		}
	}
	return &Queue{Name: name, Counts: ZeroCounts(), Limits: limits}
}
