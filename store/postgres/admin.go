package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// JobGet returns a job with its attempt history, oldest first.
func (s *Store) JobGet(ctx context.Context, p *store.JobGetParams) (*store.Job, error) {
	return s.getJob(ctx, p.ID)
}

// attemptsSQL reads the newest $2 closed attempts of job $1 (newest first
// by the (job_id, started_at) index), oldest first.
const attemptsSQL = `SELECT * FROM (SELECT id::text, attempt, worker_id, started_at, finished_at, outcome,
	error, recovered_by, last_heartbeat_at FROM attempts WHERE job_id = $1
	ORDER BY started_at DESC, attempt DESC, finished_at DESC LIMIT $2) newest ORDER BY started_at, attempt, finished_at`

func (s *Store) getJob(ctx context.Context, id string) (*store.Job, error) {
	row, err := getRow(ctx, s.pool, id)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, attemptsSQL, id, store.MaxAttemptsShown)
	if err != nil {
		return nil, fmt.Errorf("read attempts of %s: %w", id, err)
	}
	hist, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Attempt, error) {
		a := store.Attempt{JobID: id}
		var finished time.Time
		err := r.Scan(&a.ID, &a.Attempt, &a.WorkerID, &a.StartedAt, &finished, &a.Outcome, &a.Error,
			&a.RecoveredBy, &a.LastHeartbeatAt)
		a.StartedAt, finished = a.StartedAt.UTC(), finished.UTC()
		a.FinishedAt, a.LastHeartbeatAt = &finished, utc(a.LastHeartbeatAt)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("read attempts of %s: %w", id, err)
	}
	j := row.job()
	j.Attempts = append(make([]store.Attempt, 0, len(hist)+1), hist...)
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
// primary key is the order and the cursor. Under a byte budget it reads in
// chunks, each going on from the last id of the one before.
func (s *Store) JobList(ctx context.Context, p *store.JobListParams) ([]*store.Job, error) {
	if p.Cursor != "" && !validID(p.Cursor) {
		return []*store.Job{}, nil
	}
	limit, cursor := store.LimitOr(p.Limit, store.DefaultListLimit), p.Cursor
	chunk := limit
	if p.MaxBytes > 0 {
		chunk = min(limit, firstListChunk)
	}
	budget := store.NewBudget(p.MaxBytes)
	out := []*store.Job{}
	for {
		want := min(chunk, limit-len(out))
		query, args := listQuery(p, cursor, want)
		rows, page, full, err := s.queryPage(ctx, &budget, query, args...)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, page...)
		if full || len(rows) < want || len(out) == limit {
			return out, nil
		}
		cursor, chunk = rows[len(rows)-1].ID, min(2*chunk, maxListChunk)
	}
}

// listQuery is JobList's statement for up to n jobs below cursor.
//
// jobs_queue_id leaves running jobs out (migration 00012: a lease then
// writes one index entry fewer), so a queue's jobs of every state are read
// in two parts (byQueueSQL). A state is written into the text, not passed:
// a plan cached for any state could not use a partial index.
func listQuery(p *store.JobListParams, cursor string, n int) (string, []any) {
	where := `true`
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where += ` AND ` + cond + ` $` + strconv.Itoa(len(args))
	}
	if p.State != "" {
		if !slices.Contains(store.States, p.State) {
			return `SELECT ` + jobColumns + ` FROM jobs WHERE false`, nil
		}
		where += ` AND state = '` + string(p.State) + `'`
	}
	for _, f := range []struct{ col, val string }{{"queue", p.Queue}, {"kind", p.Kind}, {"schedule", p.Schedule}} {
		if f.val != "" {
			add(f.col+" =", f.val)
		}
	}
	if cursor != "" {
		add("id <", cursor)
	}
	args = append(args, n)
	limit := `$` + strconv.Itoa(len(args))
	if p.Queue != "" && p.State == "" {
		return `SELECT ` + jobColumns + ` FROM ` + byQueueSQL(where, "id DESC", limit) + ` w`, args
	}
	return `SELECT ` + jobColumns + ` FROM jobs WHERE ` + where + ` ORDER BY id DESC LIMIT ` + limit, args
}

// byQueueSQL reads the first limit jobs in order of the jobs that where
// selects, where names a queue: jobs_queue_id leaves running jobs out, so
// those not running come from it and the running ones (as many as leases
// in flight) apart, through jobs_running_worker. The running part is
// fenced (OFFSET 0) so that no plan walks the primary key in order looking
// for the few running jobs of a queue among every finished one.
func byQueueSQL(where, order, limit string) string {
	return `((SELECT * FROM jobs WHERE ` + where + ` AND state <> 'running' ORDER BY ` + order + ` LIMIT ` + limit + `)
		UNION ALL (SELECT * FROM (SELECT * FROM jobs WHERE ` + where + ` AND state = 'running' OFFSET 0) r
			ORDER BY ` + order + ` LIMIT ` + limit + `)
		ORDER BY ` + order + ` LIMIT ` + limit + `)`
}

// JobCancel cancels a waiting job, or requests cancellation of a running one.
func (s *Store) JobCancel(ctx context.Context, p *store.JobCancelParams) (*store.Job, error) {
	return s.adminUpdate(ctx, p.ID, func(row *jobRow) (string, []any, error) {
		switch store.State(row.State) {
		case store.StateScheduled, store.StateAvailable:
			return `state = 'cancelled', finished_at = $2`, []any{store.Trunc(p.Now)}, nil
		case store.StateRunning:
			return `cancel_requested = true`, nil, nil
		}
		return "", nil, store.ErrInvalidState
	})
}

// JobRetry puts a dead or cancelled job back in the queue.
func (s *Store) JobRetry(ctx context.Context, p *store.JobRetryParams) (*store.Job, error) {
	return s.adminUpdate(ctx, p.ID, func(row *jobRow) (string, []any, error) {
		if row.State != string(store.StateDead) && row.State != string(store.StateCancelled) {
			return "", nil, store.ErrInvalidState
		}
		set := `state = 'available', attempt = 0, rescues = 0, dead_reason = NULL, finished_at = NULL,
			cancel_requested = false, token = NULL, run_at = $2`
		args := []any{store.Trunc(p.Now)}
		if p.Payload != nil {
			set += `, payload = $3::jsonb`
			args = append(args, jsonArg(p.Payload))
		}
		return set, args, nil
	})
}

// JobRun makes a scheduled job available now.
func (s *Store) JobRun(ctx context.Context, p *store.JobRunParams) (*store.Job, error) {
	return s.adminUpdate(ctx, p.ID, func(row *jobRow) (string, []any, error) {
		if row.State != string(store.StateScheduled) {
			return "", nil, store.ErrInvalidState
		}
		return `state = 'available', run_at = $2`, []any{store.Trunc(p.Now)}, nil
	})
}

// adminUpdate locks a job, asks change for the SET clause its state allows
// (its parameters from $2 on), and applies it, in one transaction.
func (s *Store) adminUpdate(ctx context.Context, id string,
	change func(*jobRow) (set string, args []any, err error)) (*store.Job, error) {
	if !validID(id) {
		return nil, store.ErrNotFound
	}
	var j *store.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := readRows(ctx, tx, []string{id}, true)
		if err != nil {
			return err
		}
		row, ok := rows[id]
		if !ok {
			return store.ErrNotFound
		}
		set, args, err := change(row)
		if err != nil {
			return err
		}
		next := &jobRow{}
		err = tx.QueryRow(ctx, `UPDATE jobs SET `+set+` WHERE id = $1 RETURNING `+jobColumns,
			append([]any{id}, args...)...).Scan(next.dest()...)
		if isUniqueViolation(err) {
			// Retrying would make two unfinished jobs share a unique_key.
			return fmt.Errorf("job %s: unique_key is taken by an unfinished job: %w", id, store.ErrInvalidState)
		}
		if err != nil {
			return fmt.Errorf("update job %s: %w", id, err)
		}
		j = next.job()
		return nil
	})
	return j, err
}

// JobDelete removes a job that is not running, with its history.
func (s *Store) JobDelete(ctx context.Context, p *store.JobDeleteParams) error {
	if !validID(p.ID) {
		return store.ErrNotFound
	}
	var n int
	err := s.pool.QueryRow(ctx, `WITH gone AS (
			DELETE FROM jobs WHERE id = $1 AND state <> 'running' RETURNING id
		), history AS (
			DELETE FROM attempts WHERE job_id IN (SELECT id FROM gone)
		)
		SELECT count(*) FROM gone`, p.ID).Scan(&n)
	if err != nil {
		return fmt.Errorf("delete job %s: %w", p.ID, err)
	}
	if n == 0 {
		if _, err := getRow(ctx, s.pool, p.ID); err != nil {
			return err
		}
		return store.ErrInvalidState
	}
	return nil
}
