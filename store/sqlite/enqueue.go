package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"github.com/tetherq/tether/store"
)

const insertJob = `INSERT INTO jobs (id, queue, kind, payload, priority, state, max_attempts, timeout_ms,
	backoff_base_ms, backoff_max_ms, run_at, created_at, unique_key, tags, metadata, traceparent, tracestate,
	concurrency_key, schedule, scheduled_for)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// JobEnqueue inserts the jobs in one transaction.
func (s *Store) JobEnqueue(ctx context.Context, p *store.JobEnqueueParams) (*store.JobEnqueueResult, error) {
	now := store.Trunc(p.Now)
	res := &store.JobEnqueueResult{}
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		*res = store.JobEnqueueResult{}
		keys := p.IdempotencyKeys()
		for _, key := range keys {
			replayed, err := replayKey(ctx, tx, p, key, res)
			if err != nil || replayed {
				return false, err
			}
		}
		ins, err := tx.stmt(ctx, insertJob)
		if err != nil {
			return false, err
		}
		wake := false
		for i := range p.Jobs {
			spec := p.Jobs[i]
			spec.Normalize(now)
			j, existing, err := enqueueOne(ctx, tx, ins, &spec, now)
			if err != nil {
				return false, fmt.Errorf("enqueue job %d: %w", i, err)
			}
			res.Jobs = append(res.Jobs, j)
			res.Existing = append(res.Existing, existing)
			wake = wake || (!existing && j.State == store.StateAvailable)
		}
		if len(res.Jobs) > 0 {
			ttl := p.IdempotencyTTL
			if ttl <= 0 {
				ttl = store.IdempotencyTTL
			}
			for _, key := range keys {
				_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO idempotency_keys (key, request_hash, job_id, expires_at)
					VALUES (?, ?, ?, ?)`, key, p.RequestHash, res.Jobs[0].ID, toMS(now.Add(ttl)))
				if err != nil {
					return false, fmt.Errorf("record idempotency key: %w", err)
				}
			}
		}
		return wake, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// replayKey answers a repeated idempotency key from its record: the first
// call's job (only its id if it was pruned since), or ErrConflict.
func replayKey(ctx context.Context, tx *txn, p *store.JobEnqueueParams, key string, res *store.JobEnqueueResult) (bool, error) {
	var rec struct {
		Hash  string `db:"request_hash"`
		JobID string `db:"job_id"`
	}
	err := tx.GetContext(ctx, &rec, `SELECT request_hash, job_id FROM idempotency_keys
		WHERE key = ? AND expires_at > ?`, key, toMS(p.Now))
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read idempotency key: %w", err)
	}
	if rec.Hash != p.RequestHash {
		return false, store.ErrConflict
	}
	j, err := getJob(ctx, tx, rec.JobID)
	if errors.Is(err, store.ErrNotFound) {
		j, err = &store.Job{ID: rec.JobID}, nil
	}
	if err != nil {
		return false, err
	}
	res.Jobs, res.Existing, res.Replayed = []*store.Job{j}, []bool{true}, true
	return true, nil
}

func enqueueOne(ctx context.Context, tx *txn, ins *sqlx.Stmt, spec *store.JobSpec, now time.Time) (*store.Job, bool, error) {
	if spec.UniqueKey != nil {
		var row jobRow
		err := tx.GetContext(ctx, &row, `SELECT `+jobColumns+` FROM jobs WHERE queue = ? AND unique_key = ?
			AND state IN ('scheduled', 'available', 'running')`, spec.Queue, *spec.UniqueKey)
		if err == nil {
			return row.job(), true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, false, err
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, false, err
	}
	state := store.StateAvailable
	if spec.RunAt.After(now) {
		state = store.StateScheduled
	}
	tags, _ := json.Marshal(spec.Tags)
	_, err = ins.ExecContext(ctx, id.String(), spec.Queue, spec.Kind, nullRaw(spec.Payload), spec.Priority,
		state, spec.MaxAttempts, spec.Timeout.Milliseconds(), spec.Backoff.Base.Milliseconds(),
		spec.Backoff.Max.Milliseconds(), toMS(spec.RunAt), toMS(now), nullStr(spec.UniqueKey), string(tags),
		string(spec.Metadata), traceParent(spec.Trace), traceState(spec.Trace), nullStr(spec.ConcurrencyKey),
		nullStr(spec.Schedule), nullTime(spec.ScheduledFor))
	if err != nil {
		return nil, false, err
	}
	tx.moved(spec.Queue, "", state, 1)
	return spec.NewJob(id.String(), now), false, nil
}

// traceParent and traceState are a trace's columns, NULL for none.
func traceParent(t *store.Trace) any {
	if t == nil {
		return nil
	}
	return t.Parent
}

func traceState(t *store.Trace) any {
	if t == nil || t.State == "" {
		return nil
	}
	return t.State
}

// nullTime stores an optional instant, or NULL for none.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return toMS(*t)
}
