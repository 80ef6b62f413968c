package redis

import (
	"context"
	"fmt"
)

// The per-queue dead sets of each kind ({q}:dk:<kind>) came after the dead
// sets: a store an earlier version wrote has dead jobs and no such sets.
// Open builds them, once, and records it in the migrations set. To build
// them again (after running this version beside an earlier one, which
// does not keep them), remove "dead-kind-index" from <prefix>migrations
// and restart a server. An entry left behind by the earlier version (a job
// it retried or deleted) stays until the job dies again or is deleted, and
// listing skips it: zpage.lua checks each job's state and kind.

// migrationDeadKindIndex names the building of the dead sets by kind in
// the migrations set.
const migrationDeadKindIndex = "dead-kind-index"

// buildDeadKindIndex puts every dead job in its queue's dead set of its
// kind (deadkind.lua): O(dead jobs), in steps (see reindex).
func (s *Store) buildDeadKindIndex(ctx context.Context) error {
	queues, err := s.rdb.SMembers(ctx, s.prefix+"queues").Result()
	if err != nil {
		return err
	}
	for _, q := range queues {
		if err := s.reindex(ctx, "deadkind", q, "dead"); err != nil {
			return fmt.Errorf("queue %q: %w", q, err)
		}
	}
	return nil
}
