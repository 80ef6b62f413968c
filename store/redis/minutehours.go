package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// Each queue's hour sums of its rolled minutes ({q}:hr, lib_hours.lua)
// came after the minutes ({q}:min): a store an earlier version wrote has
// minutes and no hours. Open builds them, once, and records it in the
// migrations set; a minute rolled since rewrites its hour anyway. To build
// them again, remove "minute-hours" from <prefix>migrations and restart a
// server.

// migrationMinuteHours names the building of the hour sums in the
// migrations set.
const migrationMinuteHours = "minute-hours"

// hourBuildBatch is how many hours one hourbuild.lua call writes: at most
// 60 minutes of a queue's kinds each.
const hourBuildBatch = 24

// buildMinuteHours writes the hour sums of every hour from each queue's
// first rolled minute to its last (hourbuild.lua): a week is 168 hours per
// queue, hourBuildBatch per call. It drops nothing: the next roll prunes.
func (s *Store) buildMinuteHours(ctx context.Context) error {
	queues, err := s.rdb.SMembers(ctx, s.prefix+"queues").Result()
	if err != nil {
		return err
	}
	ttl := int64(store.DepthRetention / time.Second)
	for _, q := range queues {
		first, err := s.rdb.ZRangeWithScores(ctx, s.qkey(q, "min"), 0, 0).Result()
		if err != nil {
			return fmt.Errorf("queue %q: %w", q, err)
		}
		last, err := s.rdb.ZRangeWithScores(ctx, s.qkey(q, "min"), -1, -1).Result()
		if err != nil {
			return fmt.Errorf("queue %q: %w", q, err)
		}
		if len(first) == 0 || len(last) == 0 {
			continue
		}
		hour := time.Hour.Milliseconds()
		var hours []any
		for h := int64(first[0].Score) / hour * hour; h <= int64(last[0].Score); h += hour {
			hours = append(hours, h)
		}
		for len(hours) > 0 {
			n := min(len(hours), hourBuildBatch)
			args := append([]any{q, 0, ttl}, hours[:n]...)
			if _, err := s.call(ctx, "hourbuild", args...); err != nil {
				return fmt.Errorf("queue %q: %w", q, err)
			}
			hours = hours[n:]
		}
	}
	return nil
}
