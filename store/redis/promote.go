package redis

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// JobPromote makes up to Limit due scheduled jobs available, a chunk per
// script run (inChunks).
func (s *Store) JobPromote(ctx context.Context, p *store.JobPromoteParams) (int, error) {
	now := unixMS(store.Trunc(p.Now))
	return inChunks(ctx, store.LimitOr(p.Limit, store.MaxBatch), func(ctx context.Context, limit int) (int, error) {
		st, err := s.run(ctx, "promote", now, limit)
		if err != nil {
			return 0, fmt.Errorf("promote: %w", err)
		}
		n, _ := st.rest[0].(int64)
		return int(n), nil
	})
}
