package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tetherq/tether/store"
)

// JobAck settles a job as succeeded.
func (s *Store) JobAck(ctx context.Context, p *store.JobAckParams) (*store.Job, error) {
	var j *store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		var err error
		j, err = ack(ctx, tx, p, toMS(store.Trunc(p.Now)))
		return false, err
	})
	return j, err
}

func ack(ctx context.Context, tx *txn, p *store.JobAckParams, now int64) (*store.Job, error) {
	var row jobRow
	err := tx.GetContext(ctx, &row, `UPDATE jobs SET state = 'succeeded', finished_at = ?, result = ?,
		expires_at = NULL WHERE id = ? AND token = ? AND state = 'running' RETURNING `+jobColumns,
		now, nullRaw(p.Result), p.ID, p.Token)
	if errors.Is(err, sql.ErrNoRows) {
		return reAck(ctx, tx, p)
	}
	if err != nil {
		return nil, fmt.Errorf("ack %s: %w", p.ID, err)
	}
	// No history row: the succeeded row holds its last attempt (ackMany).
	tx.closed(store.OutcomeSucceeded, now, 1)
	tx.ended(row.Queue, store.StateSucceeded, 1)
	return row.job(), nil
}

// reAck answers an ack that matched no running lease: the job again if this
// token already settled it, otherwise ErrNotFound or ErrLeaseLost.
func reAck(ctx context.Context, tx *txn, p *store.JobAckParams) (*store.Job, error) {
	row, err := getRow(ctx, tx, p.ID)
	if err != nil {
		return nil, err
	}
	if row.State == string(store.StateSucceeded) && row.Token.Valid && row.Token.String == p.Token {
		return row.job(), nil
	}
	return nil, store.ErrLeaseLost
}

// JobFail ends a delivery as failed and applies the failure decisions.
func (s *Store) JobFail(ctx context.Context, p *store.JobFailParams) (*store.Job, error) {
	var j *store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		var err error
		j, err = fail(ctx, tx, p, store.Trunc(p.Now))
		return err == nil && j.State == store.StateAvailable, err
	})
	return j, err
}

func fail(ctx context.Context, tx *txn, p *store.JobFailParams, now time.Time) (*store.Job, error) {
	row, err := heldRow(ctx, tx, p.ID, p.Token)
	if errors.Is(err, store.ErrLeaseLost) && row.endedBy(p.Token, store.EndedByFail) {
		return row.job(), nil // a repeat of the fail that ended this delivery
	}
	if err != nil {
		return nil, err
	}
	ending := store.EndFail
	if p.NoRetry {
		ending = store.EndFailPermanent
	}
	d := decide(row, ending, p.RetryIn, 0, now)
	msg := p.Error
	return endDelivery(ctx, tx, row, d, attemptEnd{by: store.EndedByFail, outcome: d.Outcome, at: toMS(now), err: &msg})
}

// JobExtend pushes a running job's expiry and records progress.
func (s *Store) JobExtend(ctx context.Context, p *store.JobExtendParams) (*store.Job, error) {
	now := toMS(store.Trunc(p.Now))
	var j *store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		var extend, progress any
		if p.Extend > 0 {
			extend = p.Extend.Milliseconds()
		}
		if p.Progress != nil {
			progress = *p.Progress
		}
		var row jobRow
		err := tx.GetContext(ctx, &row, `UPDATE jobs SET expires_at = ? + coalesce(?, timeout_ms),
			progress = coalesce(?, progress) WHERE id = ? AND token = ? AND state = 'running'
			RETURNING `+jobColumns, now, extend, progress, p.ID, p.Token)
		if errors.Is(err, sql.ErrNoRows) {
			return false, lostOrMissing(ctx, tx, p.ID)
		}
		if err != nil {
			return false, fmt.Errorf("extend %s: %w", p.ID, err)
		}
		j = row.job()
		return false, touchWorker(ctx, tx, row.WorkerID.String, now)
	})
	return j, err
}

// JobRelease gives a running job back: attempt − 1, available or scheduled.
func (s *Store) JobRelease(ctx context.Context, p *store.JobReleaseParams) (*store.Job, error) {
	now := store.Trunc(p.Now)
	var j *store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		row, err := heldRow(ctx, tx, p.ID, p.Token)
		if errors.Is(err, store.ErrLeaseLost) && row.endedBy(p.Token, store.EndedByRelease) {
			j = row.job() // a repeat of the release that ended this delivery
			return false, nil
		}
		if err != nil {
			return false, err
		}
		d := decide(row, store.EndRelease, &p.Delay, 0, now)
		j, err = endDelivery(ctx, tx, row, d, attemptEnd{by: store.EndedByRelease, outcome: d.Outcome, at: toMS(now)})
		return err == nil && j.State == store.StateAvailable, err
	})
	return j, err
}

// JobSettle acks, then fails, many jobs in one transaction.
func (s *Store) JobSettle(ctx context.Context, p *store.JobSettleParams) ([]error, error) {
	now := store.Trunc(p.Now)
	var results []error
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		results = make([]error, 0, len(p.Acks)+len(p.Fails))
		var plain []store.JobAckParams
		for _, a := range p.Acks {
			if len(a.Result) == 0 {
				plain = append(plain, a)
			}
		}
		settled, err := ackMany(ctx, tx, plain, toMS(now))
		if err != nil {
			return false, err
		}
		for i := range p.Acks {
			if k := ackKey(p.Acks[i].ID, p.Acks[i].Token); settled[k] && len(p.Acks[i].Result) == 0 {
				results = append(results, nil)
				delete(settled, k) // a repeated ack settled once; the repeat reads the row
				continue
			}
			_, err := ack(ctx, tx, &p.Acks[i], toMS(now))
			if err != nil && !isItemErr(err) {
				return false, err
			}
			results = append(results, err)
		}
		wake := false
		for i := range p.Fails {
			j, err := fail(ctx, tx, &p.Fails[i], now)
			if err != nil && !isItemErr(err) {
				return false, err
			}
			wake = wake || (err == nil && j.State == store.StateAvailable)
			results = append(results, err)
		}
		return wake, nil
	})
	return results, err
}

func isItemErr(err error) bool {
	return errors.Is(err, store.ErrLeaseLost) || errors.Is(err, store.ErrNotFound)
}

// heldRow returns the job if token is its current lease; otherwise
// ErrNotFound, or ErrLeaseLost with the job as it is.
func heldRow(ctx context.Context, tx *txn, id, token string) (*jobRow, error) {
	row, err := getRow(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if row.State != string(store.StateRunning) || !row.Token.Valid || row.Token.String != token {
		return row, store.ErrLeaseLost
	}
	return row, nil
}

// lostOrMissing tells ErrNotFound from ErrLeaseLost after a guarded write
// matched nothing.
func lostOrMissing(ctx context.Context, q sqlx.QueryerContext, id string) error {
	if _, err := getRow(ctx, q, id); err != nil {
		return err
	}
	return store.ErrLeaseLost
}

func getRow(ctx context.Context, q sqlx.QueryerContext, id string) (*jobRow, error) {
	var row jobRow
	err := sqlx.GetContext(ctx, q, &row, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", id, err)
	}
	return &row, nil
}
