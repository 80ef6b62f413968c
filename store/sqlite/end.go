package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// endKind is what ended a delivery, kept on the job (ended_by) with the
// delivery's token.
type endKind string

const (
	endByFail       endKind = "fail"
	endByRelease    endKind = "release"
	endByRescue     endKind = "rescue"
	endByReap       endKind = "reap"
	endByDeregister endKind = "deregister"
)

// attemptEnd is how a delivery closes, as its history entry records it.
type attemptEnd struct {
	by              endKind
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
// the attempt to history.
func endDelivery(ctx context.Context, tx *txn, row *jobRow, d store.Decision, end attemptEnd) (*store.Job, error) {
	// A job back in the queue goes where the decision puts it: its own
	// place after a rescue or a release, later after a failure.
	runAt := row.RunAt
	if !d.State.Finished() {
		runAt = toMS(d.RunAt)
	}
	var finished, reason any
	if d.State.Finished() {
		finished = end.at
	}
	if d.DeadReason != nil {
		reason = string(*d.DeadReason)
	}
	var next jobRow
	err := tx.GetContext(ctx, &next, `UPDATE jobs SET state = ?, attempt = ?, rescues = ?, run_at = ?,
		dead_reason = ?, finished_at = ?, last_error = coalesce(?, last_error), expires_at = NULL, ended_by = ?
		WHERE id = ? RETURNING `+jobColumns,
		d.State, d.Attempt, d.Rescues, runAt, reason, finished, nullStr(end.err), string(end.by), row.ID)
	if err != nil {
		return nil, fmt.Errorf("end delivery of %s: %w", row.ID, err)
	}
	if err := insertAttempt(ctx, tx, row, end); err != nil {
		return nil, err
	}
	tx.ended(row.Queue, d.State, 1)
	return next.job(), nil
}

func insertAttempt(ctx context.Context, tx *txn, row *jobRow, end attemptEnd) error {
	var lost, lastHB any
	if end.lost {
		lost = 1
	}
	if end.lastHeartbeatAt != nil {
		lastHB = *end.lastHeartbeatAt
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO attempts (id, job_id, attempt, worker_id, started_at, finished_at,
		outcome, error, recovered_by, last_heartbeat_at, lost_pending) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		row.AttemptID.String, row.ID, row.Attempt, row.WorkerID.String, row.StartedAt.Int64, end.at,
		end.outcome, nullStr(end.err), nullStr(end.recoveredBy), lastHB, lost)
	if err != nil {
		return fmt.Errorf("record attempt of %s: %w", row.ID, err)
	}
	tx.closed(end.outcome, end.at, 1)
	return nil
}
