package redis

import (
	"context"
	"fmt"
)

// The per-queue retry sets ({q}:retry) came after the first version of the
// keys, which counted retrying jobs in a "retrying" field of {q}:m and found
// them by reading the scheduled sets. A store that version wrote has
// retrying jobs and no retry sets: Open builds them, once, and records it
// in the migrations set. To build them again (after running this version
// beside the earlier one, which does not keep them), remove
// "retry-index" from <prefix>migrations and restart a server.

// migrationRetryIndex names the building of the retry sets in the
// migrations set.
const migrationRetryIndex = "retry-index"

// buildRetryIndex puts every retrying job in its queue's retry set and
// takes out of it what is not (reindex.lua): O(scheduled jobs), in steps
// (see reindex).
func (s *Store) buildRetryIndex(ctx context.Context) error {
	queues, err := s.rdb.SMembers(ctx, s.prefix+"queues").Result()
	if err != nil {
		return err
	}
	for _, q := range queues {
		for _, set := range []string{"sched", "retry"} {
			if err := s.reindex(ctx, "reindex", q, set); err != nil {
				return fmt.Errorf("queue %q: %w", q, err)
			}
		}
		// The retry set's cardinality is the count now.
		if err := s.rdb.HDel(ctx, s.qkey(q, "m"), "retrying").Err(); err != nil {
			return err
		}
	}
	return nil
}

// qkey is the key of queue q's set or hash named suffix, as lib_base.lua
// names it.
func (s *Store) qkey(q, suffix string) string {
	return s.prefix + "{" + q + "}:" + suffix
}
