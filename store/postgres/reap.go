package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// lockExpiredSQL locks up to $2 running jobs whose lease expired by $1.
const lockExpiredSQL = `SELECT ` + jobColumns + ` FROM jobs
	WHERE state = 'running' AND expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`

// JobReap ends deliveries past their expiry as timed_out. SKIP LOCKED lets
// every replica's reaper run at once, each taking different rows.
func (s *Store) JobReap(ctx context.Context, p *store.JobReapParams) ([]*store.Job, error) {
	now := store.Trunc(p.Now)
	var reaped []*store.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := scanJobs(tx.Query(ctx, lockExpiredSQL, now, store.LimitOr(p.Limit, store.MaxBatch)))
		if err != nil {
			return fmt.Errorf("lock expired leases: %w", err)
		}
		ends := make([]ending, len(rows))
		for i, row := range rows {
			d := decide(row, store.EndTimedOut, nil, 0, now)
			msg := store.ReapMessage
			ends[i] = ending{by: store.EndedByReap, row: row, d: d, outcome: d.Outcome, err: &msg, lost: true}
		}
		reaped, err = endDeliveries(ctx, tx, ends, now)
		return err
	})
	return reaped, err
}
