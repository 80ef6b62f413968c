package store

import (
	"encoding/json"
	"time"
)

// State is where a job is in its lifecycle.
type State string

// Job states. Scheduled, available and running are unfinished; the other
// three are ends.
const (
	StateScheduled State = "scheduled"
	StateAvailable State = "available"
	StateRunning   State = "running"
	StateSucceeded State = "succeeded"
	StateDead      State = "dead"
	StateCancelled State = "cancelled"
)

// States lists every state in lifecycle order.
var States = []State{StateScheduled, StateAvailable, StateRunning, StateSucceeded, StateDead, StateCancelled}

// Valid reports whether s is one of the six states.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// Finished reports whether s is an end state.
func (s State) Finished() bool {
	return s == StateSucceeded || s == StateDead || s == StateCancelled
}

// DeadReason says why a job is dead.
type DeadReason string

// Dead reasons, as in the failure-decision table of the API.
const (
	DeadFailedPermanently DeadReason = "failed_permanently"
	DeadAttemptsExhausted DeadReason = "attempts_exhausted"
	DeadCrashLoop         DeadReason = "crash_loop"
	DeadTimeoutExhausted  DeadReason = "timeout_exhausted"
)

// Defaults of a job spec, applied by Normalize.
const (
	DefaultQueue       = "default"
	DefaultMaxAttempts = 20
	// DefaultTimeout is the lease length of a delivery: long enough for most
	// handlers, and a job that extends lives as long as it keeps extending.
	DefaultTimeout     = 30 * time.Minute
	DefaultBackoffBase = time.Second
	DefaultBackoffMax  = time.Hour
	// DefaultMaxRescues stops a job that kills its worker every time
	// (crash_loop) before it takes the whole fleet down.
	DefaultMaxRescues = 5
	// IdempotencyTTL is how long an Idempotency-Key is remembered.
	IdempotencyTTL = 24 * time.Hour
)

// Backoff is the retry delay curve: min(Max, Base·2^(n−1)) ±10 %.
type Backoff struct {
	Base time.Duration
	Max  time.Duration
}

// Lease is the current delivery of a running job.
type Lease struct {
	WorkerID  string
	Token     string
	ExpiresAt time.Time
}

// Job is one unit of work. Times are UTC with millisecond precision.
type Job struct {
	ID              string
	Queue           string
	Kind            string
	Payload         json.RawMessage // nil when none was given
	Priority        int
	State           State
	Attempt         int
	MaxAttempts     int
	Timeout         time.Duration
	Backoff         Backoff
	RunAt           time.Time
	CreatedAt       time.Time
	StartedAt       *time.Time
	FinishedAt      *time.Time
	UniqueKey       *string
	Tags            []string
	Metadata        json.RawMessage // a JSON object, "{}" when none
	LastError       *string
	Result          json.RawMessage
	Progress        *int
	CancelRequested bool
	Rescues         int
	DeadReason      *DeadReason
	Lease           *Lease // set while running
	Trace           *Trace // nil: none
	// ConcurrencyKey groups jobs for the queue's per-key limits; nil: none.
	ConcurrencyKey *string
	// Schedule and ScheduledFor are the schedule that fired the job and
	// the slot it fired for; nil for a job a producer enqueued.
	Schedule     *string
	ScheduledFor *time.Time

	// Attempts is filled by JobGet only, oldest first.
	Attempts []Attempt
}

// StateAt is the job's state as every answer reads it at now: a scheduled
// job whose run_at has come reads as available, though the store may not
// have promoted it yet (it does within a tick).
func (j *Job) StateAt(now time.Time) State {
	if j.State == StateScheduled && !j.RunAt.After(now) {
		return StateAvailable
	}
	return j.State
}

// RetryingAt reports whether the job, as read at now, waits to run again
// after a delivery that did not succeed: scheduled (by StateAt) with
// attempt > 0. Queue counts call these jobs retrying (Queue.Retrying), and
// the dashboard shows them as "retrying" wherever it would say scheduled.
func (j *Job) RetryingAt(now time.Time) bool {
	return j.StateAt(now) == StateScheduled && j.Attempt > 0
}

// Trace is a job's W3C Trace Context, stored as the producer gave it and
// handed to every worker that runs the job: the server never rewrites it.
type Trace struct {
	Parent string // traceparent
	State  string // tracestate, "" for none
}

// Outcome is how an attempt ended.
type Outcome string

// Attempt outcomes; OutcomeRunning is an attempt still open.
const (
	OutcomeRunning   Outcome = "running"
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeFailed    Outcome = "failed"
	OutcomeTimedOut  Outcome = "timed_out"
	OutcomeOrphaned  Outcome = "orphaned"
	OutcomeReleased  Outcome = "released"
	OutcomeCancelled Outcome = "cancelled"
)

// Attempt is one delivery of a job to a worker.
type Attempt struct {
	ID         string
	JobID      string
	Attempt    int
	WorkerID   string
	StartedAt  time.Time
	FinishedAt *time.Time
	Outcome    Outcome
	Error      *string
	// RecoveredBy and LastHeartbeatAt are set on orphaned attempts: the node
	// that rescued the job and the dead owner's last sign of life.
	RecoveredBy     *string
	LastHeartbeatAt *time.Time
}

// JobSpec is what a producer asks for. Zero values take the defaults when
// the spec is normalized.
type JobSpec struct {
	Queue       string
	Kind        string
	Payload     json.RawMessage
	Priority    int
	RunAt       time.Time // zero: now
	MaxAttempts int
	Timeout     time.Duration
	Backoff     Backoff
	UniqueKey   *string
	Tags        []string
	Metadata    json.RawMessage
	Trace       *Trace
	// ConcurrencyKey counts the job toward its queue's key_concurrency
	// and key_rate limits (see Limits); nil: the queue's limits only.
	ConcurrencyKey *string
	// Schedule and ScheduledFor are set by a schedule's fire only.
	Schedule     *string
	ScheduledFor *time.Time
}

// Normalize fills the defaults of s in place; now is the run_at of a spec
// without one. A run_at in the past is kept: it orders the job earlier.
func (s *JobSpec) Normalize(now time.Time) {
	if s.Queue == "" {
		s.Queue = DefaultQueue
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Backoff.Base == 0 {
		s.Backoff.Base = DefaultBackoffBase
	}
	if s.Backoff.Max == 0 {
		s.Backoff.Max = DefaultBackoffMax
	}
	if s.Backoff.Max < s.Backoff.Base {
		s.Backoff.Max = s.Backoff.Base
	}
	if s.RunAt.IsZero() {
		s.RunAt = now
	}
	s.RunAt = Trunc(s.RunAt)
	if s.Tags == nil {
		s.Tags = []string{}
	}
	if len(s.Metadata) == 0 {
		s.Metadata = json.RawMessage("{}")
	}
}

// NewJob is the job that enqueuing the normalized spec s as id at now
// makes: available, or scheduled when its run_at is later.
func (s *JobSpec) NewJob(id string, now time.Time) *Job {
	state := StateAvailable
	if s.RunAt.After(now) {
		state = StateScheduled
	}
	return &Job{
		ID: id, Queue: s.Queue, Kind: s.Kind, Payload: s.Payload, Priority: s.Priority,
		State: state, MaxAttempts: s.MaxAttempts, Timeout: s.Timeout, Backoff: s.Backoff,
		RunAt: s.RunAt, CreatedAt: now, UniqueKey: s.UniqueKey, Tags: s.Tags, Metadata: s.Metadata,
		Trace: s.Trace, ConcurrencyKey: s.ConcurrencyKey, Schedule: s.Schedule, ScheduledFor: s.ScheduledFor,
	}
}

// Trunc gives t in UTC at the millisecond precision every backend stores.
func Trunc(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
