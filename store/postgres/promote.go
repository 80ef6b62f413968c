package postgres

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// promoteSQL makes up to $2 jobs scheduled at or before $1 available.
const promoteSQL = `UPDATE jobs SET state = 'available' WHERE id = ANY(ARRAY(
	SELECT id FROM jobs WHERE state = 'scheduled' AND run_at <= $1
	ORDER BY run_at LIMIT $2 FOR UPDATE SKIP LOCKED))`

// JobPromote makes due scheduled jobs available. Each call does bounded
// work; the scheduler may call it more than once a tick when many jobs are
// due.
func (s *Store) JobPromote(ctx context.Context, p *store.JobPromoteParams) (int, error) {
	tag, err := s.lax.Exec(ctx, promoteSQL, store.Trunc(p.Now), store.LimitOr(p.Limit, store.MaxBatch))
	if err != nil {
		return 0, fmt.Errorf("promote: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
