package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"

	"github.com/tetherq/tether/store"
)

// JobGet returns a job with its attempt history, oldest first.
func (s *Store) JobGet(ctx context.Context, p *store.JobGetParams) (*store.Job, error) {
	return getJob(ctx, s.r, p.ID)
}

func getJob(ctx context.Context, q sqlx.QueryerContext, id string) (*store.Job, error) {
	row, err := getRow(ctx, q, id)
	if err != nil {
		return nil, err
	}
	var hist []struct {
		ID          string         `db:"id"`
		Attempt     int            `db:"attempt"`
		WorkerID    string         `db:"worker_id"`
		StartedAt   int64          `db:"started_at"`
		FinishedAt  int64          `db:"finished_at"`
		Outcome     string         `db:"outcome"`
		Error       sql.NullString `db:"error"`
		RecoveredBy sql.NullString `db:"recovered_by"`
		LastHB      sql.NullInt64  `db:"last_heartbeat_at"`
	}
	// The newest attempts, read newest first by the (job_id, started_at)
	// index, then put oldest first.
	err = sqlx.SelectContext(ctx, q, &hist, `SELECT * FROM (SELECT id, attempt, worker_id, started_at, finished_at,
		outcome, error, recovered_by, last_heartbeat_at FROM attempts WHERE job_id = ?
		ORDER BY started_at DESC, attempt DESC, finished_at DESC LIMIT ?) ORDER BY started_at, attempt, finished_at`,
		id, store.MaxAttemptsShown)
	if err != nil {
		return nil, fmt.Errorf("read attempts of %s: %w", id, err)
	}
	j := row.job()
	j.Attempts = make([]store.Attempt, 0, len(hist)+1)
	for _, h := range hist {
		finished := fromMS(h.FinishedAt)
		j.Attempts = append(j.Attempts, store.Attempt{
			ID: h.ID, JobID: id, Attempt: h.Attempt, WorkerID: h.WorkerID, StartedAt: fromMS(h.StartedAt),
			FinishedAt: &finished, Outcome: store.Outcome(h.Outcome), Error: strPtr(h.Error),
			RecoveredBy: strPtr(h.RecoveredBy), LastHeartbeatAt: timePtr(h.LastHB),
		})
	}
	switch j.State {
	case store.StateRunning:
		j.Attempts = append(j.Attempts, row.openAttempt())
	case store.StateSucceeded:
		j.Attempts = append(j.Attempts, row.closedAttempt())
	}
	j.Attempts = store.NewestAttempts(j.Attempts)
	return j, nil
}

// JobList lists jobs newest first. UUIDv7 ids are time-ordered, so the
// primary key is the order and the cursor.
func (s *Store) JobList(ctx context.Context, p *store.JobListParams) ([]*store.Job, error) {
	query := `SELECT ` + jobColumns + ` FROM jobs WHERE 1 = 1`
	var args []any
	for _, f := range []struct{ col, val string }{
		{"queue", p.Queue}, {"state", string(p.State)}, {"kind", p.Kind}, {"schedule", p.Schedule},
	} {
		if f.val != "" {
			query += ` AND ` + f.col + ` = ?`
			args = append(args, f.val)
		}
	}
	if p.Cursor != "" {
		query += ` AND id < ?`
		args = append(args, p.Cursor)
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, store.LimitOr(p.Limit, store.DefaultListLimit))
	_, jobs, _, err := s.selectPage(ctx, p.MaxBytes, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// JobCancel cancels a waiting job, or requests cancellation of a running one.
func (s *Store) JobCancel(ctx context.Context, p *store.JobCancelParams) (*store.Job, error) {
	return s.adminUpdate(ctx, p.ID, func(row *jobRow) (string, []any, bool, error) {
		switch store.State(row.State) {
		case store.StateScheduled, store.StateAvailable:
			return `state = 'cancelled', finished_at = ?`, []any{toMS(p.Now)}, false, nil
		case store.StateRunning:
			return `cancel_requested = 1`, nil, false, nil
		}
		return "", nil, false, store.ErrInvalidState
	})
}

// JobRetry puts a dead or cancelled job back in the queue.
func (s *Store) JobRetry(ctx context.Context, p *store.JobRetryParams) (*store.Job, error) {
	return s.adminUpdate(ctx, p.ID, func(row *jobRow) (string, []any, bool, error) {
		if row.State != string(store.StateDead) && row.State != string(store.StateCancelled) {
			return "", nil, false, store.ErrInvalidState
		}
		set := `state = 'available', attempt = 0, rescues = 0, dead_reason = NULL, finished_at = NULL,
			cancel_requested = 0, token = NULL, run_at = ?`
		args := []any{toMS(store.Trunc(p.Now))}
		if p.Payload != nil {
			set += `, payload = ?`
			args = append(args, nullRaw(p.Payload))
		}
		return set, args, true, nil
	})
}

// JobRun makes a scheduled job available now.
func (s *Store) JobRun(ctx context.Context, p *store.JobRunParams) (*store.Job, error) {
	return s.adminUpdate(ctx, p.ID, func(row *jobRow) (string, []any, bool, error) {
		if row.State != string(store.StateScheduled) {
			return "", nil, false, store.ErrInvalidState
		}
		return `state = 'available', run_at = ?`, []any{toMS(store.Trunc(p.Now))}, true, nil
	})
}

// adminUpdate reads a job, asks change for the SET clause its state
// allows, and applies it, in one transaction.
func (s *Store) adminUpdate(ctx context.Context, id string,
	change func(*jobRow) (set string, args []any, wake bool, err error)) (*store.Job, error) {
	var j *store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		row, err := getRow(ctx, tx, id)
		if err != nil {
			return false, err
		}
		set, args, wake, err := change(row)
		if err != nil {
			return false, err
		}
		var next jobRow
		err = tx.GetContext(ctx, &next, `UPDATE jobs SET `+set+` WHERE id = ? RETURNING `+jobColumns,
			append(args, id)...)
		if isUniqueViolation(err) {
			// Retrying would make two unfinished jobs share a unique_key.
			return false, fmt.Errorf("job %s: unique_key is taken by an unfinished job: %w", id, store.ErrInvalidState)
		}
		if err != nil {
			return false, fmt.Errorf("update job %s: %w", id, err)
		}
		tx.moved(row.Queue, store.State(row.State), store.State(next.State), 1)
		j = next.job()
		return wake, nil
	})
	return j, err
}

// JobDelete removes a job that is not running, with its history.
func (s *Store) JobDelete(ctx context.Context, p *store.JobDeleteParams) error {
	return s.tx(ctx, func(tx *txn) (bool, error) {
		row, err := getRow(ctx, tx, p.ID)
		if err != nil {
			return false, err
		}
		if row.State == string(store.StateRunning) {
			return false, store.ErrInvalidState
		}
		return false, deleteJobs(ctx, tx, []string{p.ID})
	})
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique
}
