package sqlite

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// expiredSQL reads up to ? running jobs whose lease expired by ?, by the
// jobs_running_expiry index.
const expiredSQL = `SELECT ` + jobColumns + ` FROM jobs INDEXED BY jobs_running_expiry
	WHERE state = 'running' AND expires_at <= ? ORDER BY expires_at LIMIT ?`

// JobReap ends deliveries past their expiry as timed_out.
func (s *Store) JobReap(ctx context.Context, p *store.JobReapParams) ([]*store.Job, error) {
	now := store.Trunc(p.Now)
	var reaped []*store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		reaped = nil
		var rows []jobRow
		err := tx.SelectContext(ctx, &rows, expiredSQL, toMS(now), store.LimitOr(p.Limit, store.MaxBatch))
		if err != nil {
			return false, fmt.Errorf("list expired leases: %w", err)
		}
		wake := false
		for i := range rows {
			d := decide(&rows[i], store.EndTimedOut, nil, 0, now)
			msg := store.ReapMessage
			j, err := endDelivery(ctx, tx, &rows[i], d, attemptEnd{by: endByReap, outcome: d.Outcome, at: toMS(now), err: &msg, lost: true})
			if err != nil {
				return false, err
			}
			reaped = append(reaped, j)
			wake = wake || j.State == store.StateAvailable
		}
		return wake, nil
	})
	return reaped, err
}
