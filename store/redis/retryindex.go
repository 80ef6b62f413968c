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

// reindexBatch is how many entries one reindex.lua call checks: a script
// holds up the whole server, so the build goes in short steps (2–5 ms
// each with 1,000,000 jobs in the store, on a busy machine), with other
// clients' commands between them.
const reindexBatch = 250

// migrate makes the one-off changes to keys written by an earlier version
// that no Open has made yet. Replicas opening at once may both make them:
// each step is safe to repeat.
func (s *Store) migrate(ctx context.Context) error {
	done, err := s.rdb.SIsMember(ctx, s.prefix+"migrations", migrationRetryIndex).Result()
	if err != nil || done {
		return err
	}
	if err := s.buildRetryIndex(ctx); err != nil {
		return fmt.Errorf("build the retry sets: %w", err)
	}
	return s.rdb.SAdd(ctx, s.prefix+"migrations", migrationRetryIndex).Err()
}

// buildRetryIndex puts every retrying job in its queue's retry set and
// takes out of it what is not: O(scheduled jobs), read in steps of
// reindexBatch with ZSCAN, which returns every entry present from the
// scan's start to its end. reindex.lua judges each job as it is when the
// step runs, and the transitions keep the sets from then on, so a job that
// changes state during the build ends up right whichever comes first.
func (s *Store) buildRetryIndex(ctx context.Context) error {
	queues, err := s.rdb.SMembers(ctx, s.prefix+"queues").Result()
	if err != nil {
		return err
	}
	for _, q := range queues {
		for _, set := range []string{"sched", "retry"} {
			if err := s.reindex(ctx, q, set); err != nil {
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

// reindex runs reindex.lua over the members of one of queue q's sets.
func (s *Store) reindex(ctx context.Context, q, set string) error {
	var cursor uint64
	for {
		kv, next, err := s.rdb.ZScan(ctx, s.qkey(q, set), cursor, "", reindexBatch).Result()
		if err != nil {
			return err
		}
		if len(kv) > 0 {
			args := make([]any, 0, 1+len(kv)/2)
			args = append(args, q)
			for i := 0; i < len(kv); i += 2 { // member, score, …
				args = append(args, kv[i])
			}
			if _, err := s.call(ctx, "reindex", args...); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// qkey is the key of queue q's set or hash named suffix, as lib_base.lua
// names it.
func (s *Store) qkey(q, suffix string) string {
	return s.prefix + "{" + q + "}:" + suffix
}
