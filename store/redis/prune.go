package redis

import (
	"context"

	"github.com/tetherq/tether/store"
)

// JobPrune deletes up to Limit finished jobs past retention, read from the
// per-queue finished sets by finished_at, a chunk per script run
// (inChunks).
func (s *Store) JobPrune(ctx context.Context, p *store.JobPruneParams) (int, error) {
	okBefore, deadBefore := unixMS(p.SucceededBefore), unixMS(p.DeadBefore)
	return inChunks(ctx, store.LimitOr(p.Limit, store.MaxBatch), func(ctx context.Context, limit int) (int, error) {
		return s.count(ctx, "prune", okBefore, deadBefore, limit)
	})
}

// KeyPrune has nothing to delete: idempotency keys and webhook delivery
// ids carry their own expiry (PEXPIRE), and Redis drops them.
func (s *Store) KeyPrune(context.Context, *store.KeyPruneParams) (int, error) { return 0, nil }

// WorkerPrune deletes long-silent workers that hold nothing, a chunk per
// script run (inChunks).
func (s *Store) WorkerPrune(ctx context.Context, p *store.WorkerPruneParams) (int, error) {
	before := unixMS(p.SilentBefore)
	return inChunks(ctx, store.LimitOr(p.Limit, store.MaxBatch), func(ctx context.Context, limit int) (int, error) {
		return s.count(ctx, "workerprune", before, limit)
	})
}

// NodePrune deletes long-silent nodes.
func (s *Store) NodePrune(ctx context.Context, p *store.NodePruneParams) (int, error) {
	return s.count(ctx, "nodeprune", unixMS(p.SilentBefore), store.LimitOr(p.Limit, store.MaxBatch))
}

// count runs script name and returns the count it replies.
func (s *Store) count(ctx context.Context, name string, args ...any) (int, error) {
	v, err := s.call(ctx, name, args...)
	if err != nil {
		return 0, err // call names the script
	}
	n, _ := v.(int64)
	return int(n), nil
}
