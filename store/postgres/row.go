package postgres

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// jobColumns are the columns jobRow scans, in the order of its dest.
const jobColumns = `id, queue, kind, state, priority, attempt, max_attempts, rescues, timeout_ms,
	backoff_base_ms, backoff_max_ms, run_at, created_at, started_at, finished_at, progress, cancel_requested,
	unique_key, dead_reason, last_error, tags, payload, metadata, result, worker_id, token, expires_at,
	attempt_id, traceparent, tracestate, ended_by, concurrency_key, schedule, scheduled_for`

type jobRow struct {
	ID              string
	Queue           string
	Kind            string
	State           string
	Priority        int
	Attempt         int
	MaxAttempts     int
	Rescues         int
	TimeoutMS       int64
	BackoffBaseMS   int64
	BackoffMaxMS    int64
	RunAt           time.Time
	CreatedAt       time.Time
	StartedAt       *time.Time
	FinishedAt      *time.Time
	Progress        *int
	CancelRequested bool
	UniqueKey       *string
	DeadReason      *string
	LastError       *string
	Tags            []string
	Payload         []byte
	Metadata        []byte
	Result          []byte
	WorkerID        *string
	Token           *string
	ExpiresAt       *time.Time
	AttemptID       *string
	TraceParent     *string
	TraceState      *string
	// EndedBy is how the delivery of Token ended (store.EndedBy), kept with it
	// so that a repeated fail or release can be told from a stale one.
	EndedBy        *string
	ConcurrencyKey *string
	Schedule       *string
	ScheduledFor   *time.Time
}

func (r *jobRow) dest() []any {
	return []any{&r.ID, &r.Queue, &r.Kind, &r.State, &r.Priority, &r.Attempt, &r.MaxAttempts, &r.Rescues,
		&r.TimeoutMS, &r.BackoffBaseMS, &r.BackoffMaxMS, &r.RunAt, &r.CreatedAt, &r.StartedAt, &r.FinishedAt,
		&r.Progress, &r.CancelRequested, &r.UniqueKey, &r.DeadReason, &r.LastError, &r.Tags, &r.Payload,
		&r.Metadata, &r.Result, &r.WorkerID, &r.Token, &r.ExpiresAt, &r.AttemptID, &r.TraceParent, &r.TraceState,
		&r.EndedBy, &r.ConcurrencyKey, &r.Schedule, &r.ScheduledFor}
}

// scanJobs reads every row of rows as a job row.
func scanJobs(rows pgx.Rows, err error) ([]*jobRow, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*jobRow
	layout, fast := layoutOf(rows.FieldDescriptions())
	for rows.Next() {
		r := &jobRow{}
		if fast {
			err = r.decodeJobRow(layout, rows.RawValues())
		} else {
			err = rows.Scan(r.dest()...)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (r *jobRow) job() *store.Job {
	j := &store.Job{
		ID:              r.ID,
		Queue:           r.Queue,
		Kind:            r.Kind,
		Payload:         raw(r.Payload),
		Priority:        r.Priority,
		State:           store.State(r.State),
		Attempt:         r.Attempt,
		MaxAttempts:     r.MaxAttempts,
		Timeout:         millis(r.TimeoutMS),
		Backoff:         store.Backoff{Base: millis(r.BackoffBaseMS), Max: millis(r.BackoffMaxMS)},
		RunAt:           r.RunAt.UTC(),
		CreatedAt:       r.CreatedAt.UTC(),
		StartedAt:       utc(r.StartedAt),
		FinishedAt:      utc(r.FinishedAt),
		UniqueKey:       r.UniqueKey,
		Tags:            r.Tags,
		Metadata:        raw(r.Metadata),
		LastError:       r.LastError,
		Result:          raw(r.Result),
		Progress:        r.Progress,
		CancelRequested: r.CancelRequested,
		Rescues:         r.Rescues,
		ConcurrencyKey:  r.ConcurrencyKey,
		Schedule:        r.Schedule,
		ScheduledFor:    utc(r.ScheduledFor),
	}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	if r.DeadReason != nil {
		d := store.DeadReason(*r.DeadReason)
		j.DeadReason = &d
	}
	if j.State == store.StateRunning {
		j.Lease = &store.Lease{WorkerID: deref(r.WorkerID), Token: deref(r.Token)}
		if r.ExpiresAt != nil {
			j.Lease.ExpiresAt = r.ExpiresAt.UTC()
		}
	}
	if r.TraceParent != nil {
		j.Trace = &store.Trace{Parent: *r.TraceParent, State: deref(r.TraceState)}
	}
	return j
}

// endedBy reports whether the delivery of token ended by kind: a fail or a
// release repeated under it then answers with the job as it is.
func (r *jobRow) endedBy(token string, kind store.EndedBy) bool {
	return r.State != string(store.StateRunning) && deref(r.Token) == token && deref(r.EndedBy) == string(kind)
}

// openAttempt is the attempt a running row holds, as history shows it.
func (r *jobRow) openAttempt() store.Attempt {
	a := store.Attempt{
		ID:       deref(r.AttemptID),
		JobID:    r.ID,
		Attempt:  r.Attempt,
		WorkerID: deref(r.WorkerID),
		Outcome:  store.OutcomeRunning,
	}
	if r.StartedAt != nil {
		a.StartedAt = r.StartedAt.UTC()
	}
	return a
}

// closedAttempt is the attempt a succeeded row ended with, as history
// shows it: a success writes no history row (ackSQL).
func (r *jobRow) closedAttempt() store.Attempt {
	a := r.openAttempt()
	a.Outcome = store.OutcomeSucceeded
	a.FinishedAt = utc(r.FinishedAt)
	return a
}

func jobs(rows []*jobRow) []*store.Job {
	out := make([]*store.Job, len(rows))
	for i, r := range rows {
		out[i] = r.job()
	}
	return out
}

// validID reports whether id can name a job: a UUID in its canonical
// lowercase form, as the store writes ids. Anything else names no job,
// rather than failing the statement that casts it (or matching a job under
// another spelling, which the other backends would not).
func validID(id string) bool {
	_, ok := parseID(id)
	return ok
}

// parseID is validID with the id's bytes, the form pgx sends a uuid in
// binary (a string it sends as text, after failing to encode it: a cost
// per element in a list of ids).
func parseID(id string) ([16]byte, bool) {
	u, err := uuid.Parse(id)
	return u, err == nil && u.String() == id
}

func millis(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// raw is a stored JSON value, nil for SQL NULL.
func raw(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}

// jsonArg stores a JSON value, or NULL for none.
func jsonArg(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}
