package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// countFolder folds the queue count deltas that writes left behind into
// the counts the API and the dashboard read (a backend that counts on the
// write path has none). It runs every tick, last, so a tick's own changes
// are counted by its end; it is routine, so it never logs.
type countFolder struct {
	store store.Store
}

func (c *countFolder) runOnce(ctx context.Context, _ time.Time) (int, error) {
	n, err := c.store.CountFold(ctx, &store.CountFoldParams{})
	if err != nil {
		return n, fmt.Errorf("fold queue counts: %w", err)
	}
	return n, nil
}
