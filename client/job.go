package client

import (
	"encoding/json"
	"time"
)

// JobSpec is what a producer asks for; zero fields take the server's
// defaults (shared/API.md, "Job spec").
type JobSpec struct {
	Kind        string          `json:"kind"`
	Queue       string          `json:"queue,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Priority    int             `json:"priority,omitempty"`
	RunAt       *time.Time      `json:"run_at,omitempty"`
	DelayMS     int64           `json:"delay_ms,omitempty"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
	TimeoutMS   int64           `json:"timeout_ms,omitempty"`
	Backoff     *Backoff        `json:"backoff,omitempty"`
	UniqueKey   string          `json:"unique_key,omitempty"`
	Tags        []string        `json:"tags,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	// Trace carries a W3C trace context to every worker that runs the job.
	Trace          *Trace `json:"trace,omitempty"`
	ConcurrencyKey string `json:"concurrency_key,omitempty"`
}

// Trace is a W3C Trace Context: Traceparent is
// 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>.
type Trace struct {
	Traceparent string `json:"traceparent"`
	Tracestate  string `json:"tracestate,omitempty"`
}

// Backoff is a job's retry delay curve.
type Backoff struct {
	BaseMS int64 `json:"base_ms"`
	MaxMS  int64 `json:"max_ms"`
}

// Job is a job as the server returns it.
type Job struct {
	ID              string          `json:"id"`
	Queue           string          `json:"queue"`
	Kind            string          `json:"kind"`
	Payload         json.RawMessage `json:"payload"`
	Priority        int             `json:"priority"`
	State           string          `json:"state"`
	Attempt         int             `json:"attempt"`
	MaxAttempts     int             `json:"max_attempts"`
	TimeoutMS       int64           `json:"timeout_ms"`
	Backoff         *Backoff        `json:"backoff,omitempty"`
	RunAt           time.Time       `json:"run_at"`
	CreatedAt       time.Time       `json:"created_at"`
	StartedAt       *time.Time      `json:"started_at"`
	FinishedAt      *time.Time      `json:"finished_at"`
	UniqueKey       *string         `json:"unique_key"`
	Tags            []string        `json:"tags"`
	Metadata        json.RawMessage `json:"metadata"`
	LastError       *string         `json:"last_error"`
	Result          json.RawMessage `json:"result"`
	Progress        *int            `json:"progress"`
	CancelRequested bool            `json:"cancel_requested"`
	Rescues         int             `json:"rescues"`
	DeadReason      *string         `json:"dead_reason"`
	Lease           *Lease          `json:"lease"`
	Trace           *Trace          `json:"trace"`
	ConcurrencyKey  *string         `json:"concurrency_key"`
	// Schedule names the schedule that fired the job, ScheduledFor its slot.
	Schedule     *string    `json:"schedule"`
	ScheduledFor *time.Time `json:"scheduled_for"`
	// Attempts is filled by GetJob only, oldest first.
	Attempts []Attempt `json:"attempts,omitempty"`
}

// Lease is the current delivery of a running job. Token must accompany
// every ack, fail, extend and release of that delivery; only the Lease call
// that took the delivery returns it (empty in GetJob, ListJobs and the
// answers of every other call, and left out when the job is encoded again).
type Lease struct {
	WorkerID  string    `json:"worker_id"`
	Token     string    `json:"token,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Attempt is one delivery of a job. RecoveredBy and LastHeartbeatAt are set
// when the outcome is orphaned.
type Attempt struct {
	ID              string     `json:"id"`
	Attempt         int        `json:"attempt"`
	WorkerID        string     `json:"worker_id"`
	StartedAt       time.Time  `json:"started_at"`
	FinishedAt      *time.Time `json:"finished_at"`
	Outcome         string     `json:"outcome"`
	Error           *string    `json:"error"`
	RecoveredBy     *string    `json:"recovered_by"`
	LastHeartbeatAt *time.Time `json:"last_heartbeat_at"`
}
