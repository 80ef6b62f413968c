package redis

import (
	"context"
	"fmt"

	"github.com/tetherq/tether/store"
)

// JobPromote makes up to Limit due scheduled jobs available.
func (s *Store) JobPromote(ctx context.Context, p *store.JobPromoteParams) (int, error) {
	st, err := s.run(ctx, "promote", unixMS(store.Trunc(p.Now)), store.LimitOr(p.Limit, store.MaxBatch))
	if err != nil {
		return 0, fmt.Errorf("promote: %w", err)
	}
	n, _ := st.rest[0].(int64)
	return int(n), nil
}
