package redis

import (
	"context"
	"fmt"
)

// migrations are the one-off changes to keys that an earlier version
// wrote, in order, each under the name Open records in <prefix>migrations
// once it has made it. Each builds an index that a later version added
// (retryindex.go, deadkindindex.go, minutehours.go), from the keys every version keeps.
var migrations = []struct {
	name string
	run  func(*Store, context.Context) error
}{
	{migrationRetryIndex, (*Store).buildRetryIndex},
	{migrationDeadKindIndex, (*Store).buildDeadKindIndex},
	{migrationMinuteHours, (*Store).buildMinuteHours},
}

// reindexBatch is how many entries one call of a building script checks:
// a script holds up the whole server, so a build goes in short steps (2–5
// ms each with 1,000,000 jobs in the store, on a busy machine), with other
// clients' commands between them.
const reindexBatch = 250

// migrate makes the migrations that no Open has made yet. Replicas opening
// at once may both make one: each step is safe to repeat.
func (s *Store) migrate(ctx context.Context) error {
	for _, m := range migrations {
		done, err := s.rdb.SIsMember(ctx, s.prefix+"migrations", m.name).Result()
		if err != nil {
			return err
		}
		if done {
			continue
		}
		if err := m.run(s, ctx); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		if err := s.rdb.SAdd(ctx, s.prefix+"migrations", m.name).Err(); err != nil {
			return err
		}
	}
	return nil
}

// reindex runs script over the members of one of queue q's sets, in steps
// of reindexBatch with ZSCAN, which returns every entry present from the
// scan's start to its end. The script (ARGV: prefix, queue, job ids)
// judges each job as it is when the step runs, and the transitions keep
// the index from then on, so a job that changes state during the build
// ends up right whichever comes first.
func (s *Store) reindex(ctx context.Context, script, q, set string) error {
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
			if _, err := s.call(ctx, script, args...); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}
