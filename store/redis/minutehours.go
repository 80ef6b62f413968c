package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// Each queue's hours of its per-minute history (lib_hours.lua: {q}:hr, the
// sums of its rolled minutes {q}:min; {q}:dh, the deepest samples of its
// depth {q}:depth) came after the minutes: a store an earlier version
// wrote has minutes and no hours. Open builds them, once, and records it
// in the migrations set; a minute written since rewrites its hour anyway.
// To build them again, remove "minute-hours" from <prefix>migrations and
// restart a server.

// migrationMinuteHours names the building of the hours in the migrations
// set.
const migrationMinuteHours = "minute-hours"

// hourBuildBatch is how many hours one hourbuild.lua call writes, each
// from up to 60 minutes (of each kind): a script holds up the whole
// server, and 24 hours took up to 25 ms a call at a million jobs on the
// loaded machine.
const hourBuildBatch = 6

// buildMinuteHours writes the hours of every hour from each queue's first
// minute to its last, of both histories (hourbuild.lua): a week is 168
// hours per queue and history, hourBuildBatch per call (0.27 s of the
// server's time for 4 queues with a week of depth, one of them with a
// week of minutes, on a loaded machine). It drops nothing: the next
// roll prunes.
func (s *Store) buildMinuteHours(ctx context.Context) error {
	queues, err := s.rdb.SMembers(ctx, s.prefix+"queues").Result()
	if err != nil {
		return err
	}
	for _, q := range queues {
		for _, set := range []string{"min", "depth"} {
			if err := s.buildHours(ctx, q, set); err != nil {
				return fmt.Errorf("queue %q, %s: %w", q, set, err)
			}
		}
	}
	return nil
}

// buildHours writes queue q's hours of its per-minute zset set.
func (s *Store) buildHours(ctx context.Context, q, set string) error {
	first, err := s.rdb.ZRangeWithScores(ctx, s.qkey(q, set), 0, 0).Result()
	if err != nil {
		return err
	}
	last, err := s.rdb.ZRangeWithScores(ctx, s.qkey(q, set), -1, -1).Result()
	if err != nil || len(first) == 0 || len(last) == 0 {
		return err
	}
	hour := time.Hour.Milliseconds()
	var hours []any
	for h := int64(first[0].Score) / hour * hour; h <= int64(last[0].Score); h += hour {
		hours = append(hours, h)
	}
	ttl := int64(store.DepthRetention / time.Second)
	for len(hours) > 0 {
		n := min(len(hours), hourBuildBatch)
		if _, err := s.call(ctx, "hourbuild", append([]any{q, set, 0, ttl}, hours[:n]...)...); err != nil {
			return err
		}
		hours = hours[n:]
	}
	return nil
}
