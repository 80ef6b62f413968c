package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tetherq/tether/store"
)

// jobColumns are the columns jobRow scans, in the order of its fields.
const jobColumns = `id, queue, kind, payload, priority, state, attempt, max_attempts, timeout_ms,
	backoff_base_ms, backoff_max_ms, run_at, created_at, started_at, finished_at, unique_key, tags,
	metadata, last_error, result, progress, cancel_requested, rescues, dead_reason, worker_id, token,
	expires_at, attempt_id, traceparent, tracestate, ended_by, concurrency_key, schedule, scheduled_for`

type jobRow struct {
	ID              string         `db:"id"`
	Queue           string         `db:"queue"`
	Kind            string         `db:"kind"`
	Payload         sql.NullString `db:"payload"`
	Priority        int            `db:"priority"`
	State           string         `db:"state"`
	Attempt         int            `db:"attempt"`
	MaxAttempts     int            `db:"max_attempts"`
	TimeoutMS       int64          `db:"timeout_ms"`
	BackoffBaseMS   int64          `db:"backoff_base_ms"`
	BackoffMaxMS    int64          `db:"backoff_max_ms"`
	RunAt           int64          `db:"run_at"`
	CreatedAt       int64          `db:"created_at"`
	StartedAt       sql.NullInt64  `db:"started_at"`
	FinishedAt      sql.NullInt64  `db:"finished_at"`
	UniqueKey       sql.NullString `db:"unique_key"`
	Tags            string         `db:"tags"`
	Metadata        string         `db:"metadata"`
	LastError       sql.NullString `db:"last_error"`
	Result          sql.NullString `db:"result"`
	Progress        sql.NullInt64  `db:"progress"`
	CancelRequested bool           `db:"cancel_requested"`
	Rescues         int            `db:"rescues"`
	DeadReason      sql.NullString `db:"dead_reason"`
	WorkerID        sql.NullString `db:"worker_id"`
	Token           sql.NullString `db:"token"`
	ExpiresAt       sql.NullInt64  `db:"expires_at"`
	AttemptID       sql.NullString `db:"attempt_id"`
	TraceParent     sql.NullString `db:"traceparent"`
	TraceState      sql.NullString `db:"tracestate"`
	// EndedBy is how the delivery of Token ended (store.EndedBy), kept with it
	// so that a repeated fail or release can be told from a stale one.
	EndedBy        sql.NullString `db:"ended_by"`
	ConcurrencyKey sql.NullString `db:"concurrency_key"`
	Schedule       sql.NullString `db:"schedule"`
	ScheduledFor   sql.NullInt64  `db:"scheduled_for"`
}

// fields are r's fields in jobColumns order, to scan a row into.
func (r *jobRow) fields() []any {
	return []any{&r.ID, &r.Queue, &r.Kind, &r.Payload, &r.Priority, &r.State, &r.Attempt, &r.MaxAttempts, &r.TimeoutMS,
		&r.BackoffBaseMS, &r.BackoffMaxMS, &r.RunAt, &r.CreatedAt, &r.StartedAt, &r.FinishedAt, &r.UniqueKey, &r.Tags,
		&r.Metadata, &r.LastError, &r.Result, &r.Progress, &r.CancelRequested, &r.Rescues, &r.DeadReason, &r.WorkerID, &r.Token,
		&r.ExpiresAt, &r.AttemptID, &r.TraceParent, &r.TraceState, &r.EndedBy, &r.ConcurrencyKey, &r.Schedule, &r.ScheduledFor}
}

// selectJobRows reads the rows of query, which selects jobColumns, into a
// slice made for n of them. sqlx's SelectContext does the same by
// reflection and grows its slice by copying the rows (≈ 500 bytes each):
// in a bulk rescue that was two fifths of what the rescue allocated.
func selectJobRows(ctx context.Context, q sqlx.QueryerContext, n int, query string, args ...any) ([]jobRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]jobRow, 0, n)
	for rows.Next() {
		out = append(out, jobRow{})
		if err := rows.Scan(out[len(out)-1].fields()...); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

func (r *jobRow) job() *store.Job {
	j := &store.Job{
		ID:              r.ID,
		Queue:           r.Queue,
		Kind:            r.Kind,
		Payload:         rawOrNil(r.Payload),
		Priority:        r.Priority,
		State:           store.State(r.State),
		Attempt:         r.Attempt,
		MaxAttempts:     r.MaxAttempts,
		Timeout:         time.Duration(r.TimeoutMS) * time.Millisecond,
		Backoff:         store.Backoff{Base: millis(r.BackoffBaseMS), Max: millis(r.BackoffMaxMS)},
		RunAt:           fromMS(r.RunAt),
		CreatedAt:       fromMS(r.CreatedAt),
		StartedAt:       timePtr(r.StartedAt),
		FinishedAt:      timePtr(r.FinishedAt),
		UniqueKey:       strPtr(r.UniqueKey),
		Metadata:        json.RawMessage(r.Metadata),
		LastError:       strPtr(r.LastError),
		Result:          rawOrNil(r.Result),
		CancelRequested: r.CancelRequested,
		Rescues:         r.Rescues,
		ConcurrencyKey:  strPtr(r.ConcurrencyKey),
		Schedule:        strPtr(r.Schedule),
		ScheduledFor:    timePtr(r.ScheduledFor),
	}
	j.Tags = decodeTags(r.Tags)
	if r.Progress.Valid {
		p := int(r.Progress.Int64)
		j.Progress = &p
	}
	if r.DeadReason.Valid {
		d := store.DeadReason(r.DeadReason.String)
		j.DeadReason = &d
	}
	if j.State == store.StateRunning {
		j.Lease = &store.Lease{WorkerID: r.WorkerID.String, Token: r.Token.String, ExpiresAt: fromMS(r.ExpiresAt.Int64)}
	}
	if r.TraceParent.Valid {
		j.Trace = &store.Trace{Parent: r.TraceParent.String, State: r.TraceState.String}
	}
	return j
}

// endedBy reports whether the delivery of token ended by kind: a fail or a
// release repeated under it then answers with the job as it is.
func (r *jobRow) endedBy(token string, kind store.EndedBy) bool {
	return r.State != string(store.StateRunning) && r.Token.Valid && r.Token.String == token &&
		r.EndedBy.String == string(kind)
}

// openAttempt is the attempt a running row holds, as history shows it.
func (r *jobRow) openAttempt() store.Attempt {
	return store.Attempt{
		ID:        r.AttemptID.String,
		JobID:     r.ID,
		Attempt:   r.Attempt,
		WorkerID:  r.WorkerID.String,
		StartedAt: fromMS(r.StartedAt.Int64),
		Outcome:   store.OutcomeRunning,
	}
}

// closedAttempt is the attempt a succeeded row ended with, as history
// shows it: a success writes no history row (ackMany).
func (r *jobRow) closedAttempt() store.Attempt {
	a := r.openAttempt()
	a.Outcome = store.OutcomeSucceeded
	if r.FinishedAt.Valid {
		finished := fromMS(r.FinishedAt.Int64)
		a.FinishedAt = &finished
	}
	return a
}

func toMS(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func millis(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

// decodeTags reads a tags column: a JSON array of strings, never nil. Most
// jobs have none, and "[]" skips the decoder, which cost about half of
// turning a row into a job (profile of a bulk rescue; leases too).
func decodeTags(s string) []string {
	var tags []string
	if s != "[]" {
		if err := json.Unmarshal([]byte(s), &tags); err != nil {
			tags = nil
		}
	}
	if tags == nil {
		return []string{}
	}
	return tags
}

func strPtr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

func rawOrNil(v sql.NullString) json.RawMessage {
	if !v.Valid {
		return nil
	}
	return json.RawMessage(v.String)
}

// nullRaw stores a JSON value, or NULL for none.
func nullRaw(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}

func nullStr(v *string) any {
	if v == nil {
		return nil
	}
	return *v
}
