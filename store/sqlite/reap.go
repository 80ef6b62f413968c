package sqlite

import (
	"context"
	"fmt"
	"slices"

	"github.com/tetherq/tether/store"
)

// expiredSQL reads up to ? running jobs whose lease expired by ?, by the
// jobs_running_expiry index.
const expiredSQL = `SELECT ` + jobColumns + ` FROM jobs INDEXED BY jobs_running_expiry
	WHERE state = 'running' AND expires_at <= ? ORDER BY expires_at LIMIT ?`

// JobReap ends deliveries past their expiry as timed_out, a chunk per
// transaction (inChunks).
func (s *Store) JobReap(ctx context.Context, p *store.JobReapParams) ([]*store.Job, error) {
	now := store.Trunc(p.Now)
	return inChunks(ctx, s, store.LimitOr(p.Limit, store.MaxBatch), func(tx *txn, n int) ([]*store.Job, bool, error) {
		var rows []jobRow
		if err := tx.SelectContext(ctx, &rows, expiredSQL, toMS(now), n); err != nil {
			return nil, false, fmt.Errorf("list expired leases: %w", err)
		}
		es := make([]ending, len(rows))
		for i := range rows {
			d := decide(&rows[i], store.EndTimedOut, nil, 0, now)
			msg := store.ReapMessage
			es[i] = ending{&rows[i], d, attemptEnd{by: store.EndedByReap, outcome: d.Outcome, at: toMS(now), err: &msg, lost: true}}
		}
		reaped, err := endDeliveries(ctx, tx, es)
		if err != nil {
			return nil, false, err
		}
		wake := slices.ContainsFunc(reaped, func(j *store.Job) bool { return j.State == store.StateAvailable })
		return reaped, wake, nil
	})
}
