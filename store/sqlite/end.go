package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// attemptEnd is how a delivery closes, as its history entry records it.
type attemptEnd struct {
	by              store.EndedBy
	outcome         store.Outcome
	at              int64
	err             *string
	recoveredBy     *string
	lastHeartbeatAt *int64
	// lost marks a delivery taken from its worker, reported at its next
	// heartbeat.
	lost bool
}

func decide(row *jobRow, e store.Ending, retryIn *time.Duration, maxRescues int, now time.Time) store.Decision {
	return store.Decide(store.DecideParams{
		Ending:          e,
		Attempt:         row.Attempt,
		MaxAttempts:     row.MaxAttempts,
		Rescues:         row.Rescues,
		MaxRescues:      maxRescues,
		CancelRequested: row.CancelRequested,
		Backoff:         store.Backoff{Base: millis(row.BackoffBaseMS), Max: millis(row.BackoffMaxMS)},
		RetryIn:         retryIn,
		RunAt:           fromMS(row.RunAt),
		Now:             now,
	})
}

// endDelivery closes a running job's delivery with decision d and writes
// the attempt to history: endDeliveries of one.
func endDelivery(ctx context.Context, tx *txn, row *jobRow, d store.Decision, end attemptEnd) (*store.Job, error) {
	jobs, err := endDeliveries(ctx, tx, []ending{{row, d, end}})
	if err != nil {
		return nil, err
	}
	return jobs[0], nil
}

// ending is one delivery to close: the running job's row as read, the
// decision on it, and how its attempt closes.
type ending struct {
	row *jobRow
	d   store.Decision
	end attemptEnd
}

// endDeliveries closes running jobs' deliveries, each with its decision,
// and writes their attempts to history; it returns the jobs as they are
// now, in the order given. It is the one place a delivery ends other than
// by an ack (settle.go), whatever ended it. Each ending's row must be the
// whole row, as read in tx: the job returned is that row with the
// decision's columns (ending.after), which is also all the update writes.
// A bulk ending (a rescue, a reap) costs a statement per endingChunks
// piece, not two per job: SQLite itself spends ≈ 10 µs on a job's row and
// indexes, a statement's trip through database/sql and cgo several times
// that.
func endDeliveries(ctx context.Context, tx *txn, es []ending) ([]*store.Job, error) {
	out := make([]*store.Job, 0, len(es))
	for rest := es; len(rest) > 0; {
		chunk := rest[:endingChunk(len(rest))]
		rest = rest[len(chunk):]
		after, err := updateEnded(ctx, tx, chunk)
		if err != nil {
			return nil, err
		}
		if err := insertAttempts(ctx, tx, chunk); err != nil {
			return nil, err
		}
		for i := range after {
			out = append(out, after[i].job())
			tx.ended(after[i].Queue, chunk[i].d.State, 1)
		}
	}
	return out, nil
}

// endingChunk is the size of the next statement's piece of n endings: the
// largest power of two up to 64 that fits, so the statement cache holds at
// most seven texts of each statement however the counts vary.
func endingChunk(n int) int {
	size := 64
	for size > n {
		size /= 2
	}
	return size
}

// after is the job's row once its delivery has ended: the row as read
// with the decision's columns. A job back in the queue goes where the
// decision puts it (its own place after a rescue or a release, later after
// a failure); a finished one keeps its run_at.
func (e *ending) after() jobRow {
	r := *e.row
	r.State, r.Attempt, r.Rescues = string(e.d.State), e.d.Attempt, e.d.Rescues
	r.FinishedAt, r.DeadReason, r.ExpiresAt = sql.NullInt64{}, sql.NullString{}, sql.NullInt64{}
	if e.d.State.Finished() {
		r.FinishedAt = sql.NullInt64{Int64: e.end.at, Valid: true}
	} else {
		r.RunAt = toMS(e.d.RunAt)
	}
	if e.d.DeadReason != nil {
		r.DeadReason = sql.NullString{String: string(*e.d.DeadReason), Valid: true}
	}
	if e.end.err != nil {
		r.LastError = sql.NullString{String: *e.end.err, Valid: true}
	}
	r.EndedBy = sql.NullString{String: string(e.end.by), Valid: true}
	return r
}

// endedColumns are the values endedSQL takes per job: its id, then the
// columns an ending changes.
const endedColumns = 9

// endedSQL writes the rows of n ended deliveries, endedColumns values each
// (a VALUES table joined to the jobs by primary key). It returns nothing:
// the caller has the rows (ending.after), and a RETURNING of whole rows
// cost more than the update itself.
func endedSQL(n int) string {
	return `UPDATE jobs SET state = d.column2, attempt = d.column3, rescues = d.column4,
		run_at = d.column5, dead_reason = d.column6, finished_at = d.column7,
		last_error = d.column8, expires_at = NULL, ended_by = d.column9
		FROM (VALUES ` + rowMarks(n, endedColumns) + `) AS d WHERE jobs.id = d.column1`
}

// rowMarks is n rows of a VALUES list of width placeholders each.
func rowMarks(n, width int) string {
	return strings.TrimSuffix(strings.Repeat("("+marks(width)+"), ", n), ", ")
}

// updateEnded writes the rows of es once ended in one statement and returns
// them, in the order of es.
func updateEnded(ctx context.Context, tx *txn, es []ending) ([]jobRow, error) {
	after := make([]jobRow, len(es))
	args := make([]any, 0, endedColumns*len(es))
	for i := range es {
		r := es[i].after()
		after[i] = r
		args = append(args, r.ID, r.State, r.Attempt, r.Rescues, r.RunAt, r.DeadReason, r.FinishedAt, r.LastError, r.EndedBy)
	}
	res, err := tx.ExecContext(ctx, endedSQL(len(es)), args...)
	if err != nil {
		return nil, fmt.Errorf("end %d deliveries: %w", len(es), err)
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(es)) {
		return nil, fmt.Errorf("end %d deliveries: %d rows changed (%v)", len(es), n, err)
	}
	return after, nil
}

// insertAttempts writes the closed attempts of es to history in one
// statement.
func insertAttempts(ctx context.Context, tx *txn, es []ending) error {
	const perRow = 11
	args := make([]any, 0, perRow*len(es))
	for _, e := range es {
		var lost, lastHB any
		if e.end.lost {
			lost = 1
		}
		if e.end.lastHeartbeatAt != nil {
			lastHB = *e.end.lastHeartbeatAt
		}
		args = append(args, e.row.AttemptID.String, e.row.ID, e.row.Attempt, e.row.WorkerID.String, e.row.StartedAt.Int64,
			e.end.at, e.end.outcome, nullStr(e.end.err), nullStr(e.end.recoveredBy), lastHB, lost)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at,
		outcome, error, recovered_by, last_heartbeat_at, lost_pending) VALUES `+rowMarks(len(es), perRow), args...)
	if err != nil {
		return fmt.Errorf("record %d attempts: %w", len(es), err)
	}
	for _, e := range es {
		tx.closed(e.end.outcome, e.end.at, 1)
	}
	return nil
}
