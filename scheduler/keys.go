package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// keyPruner deletes expired idempotency keys and webhook delivery ids, in
// the pruning's bounded batches. Their expiry is their own (24 h, a hook's
// dedupe_ms), independent of job retention.
type keyPruner struct {
	store store.Store
}

// runOnce prunes expired keys and returns how many it deleted.
func (k *keyPruner) runOnce(ctx context.Context, now time.Time) (int, error) {
	return inBatches(pruneBatch, pruneMaxBatches, func(limit int) (int, error) {
		n, err := k.store.KeyPrune(ctx, &store.KeyPruneParams{Limit: limit, Now: now})
		if err != nil {
			return n, fmt.Errorf("prune expired keys: %w", err)
		}
		return n, nil
	})
}
