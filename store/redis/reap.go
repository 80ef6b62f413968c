package redis

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// JobReap ends running jobs past their expiry: it reads the expired ids
// from the queues' running sets by deadline, then reaps each with its own
// script, which checks the expiry again (an extend may have come in
// between).
func (s *Store) JobReap(ctx context.Context, p *store.JobReapParams) ([]*store.Job, error) {
	now := unixMS(store.Trunc(p.Now))
	v, err := s.call(ctx, "expired", now, store.LimitOr(p.Limit, store.MaxBatch))
	if err != nil {
		return nil, fmt.Errorf("list expired leases: %w", err)
	}
	ids := strs(v)
	argLists := make([][]any, len(ids))
	for i, id := range ids {
		argLists[i] = []any{id, now, jitter(), store.ReapMessage}
	}
	return s.eachJob(ctx, "reap", argLists)
}
