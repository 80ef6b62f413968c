package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// throughputRoller keeps the per-minute throughput the dashboard charts:
// it rolls settled minutes up and drops those past retention (backends
// that count on the write path only drop, or do nothing). It is routine,
// so it never logs.
type throughputRoller struct {
	store store.Store
}

func (r *throughputRoller) runOnce(ctx context.Context, now time.Time) (int, error) {
	n, err := r.store.ThroughputRoll(ctx, &store.ThroughputRollParams{Now: now})
	if err != nil {
		return n, fmt.Errorf("roll up throughput: %w", err)
	}
	return n, nil
}
