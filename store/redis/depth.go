package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
)

// QueueDepthRoll writes the minute's samples in one script (depth.lua),
// each queue's old minutes dropped as its sample goes in.
func (s *Store) QueueDepthRoll(ctx context.Context, p *store.QueueDepthRollParams) (int, error) {
	depths := p.Depths[:min(len(p.Depths), store.MaxDepthQueues)]
	if len(depths) == 0 {
		return 0, nil
	}
	args := []any{unixMS(p.Now.Truncate(time.Minute)), unixMS(p.Now.Add(-store.DepthRetention)),
		int64(store.DepthRetention / time.Second)}
	for _, d := range depths {
		args = append(args, d.Queue, d.Available, d.Scheduled)
	}
	v, err := s.call(ctx, "depth", args...)
	if err != nil {
		return 0, fmt.Errorf("roll queue depths: %w", err)
	}
	n, _ := v.(int64)
	return int(n), nil
}

// QueueDepthList reads one score range of the queue's depth zset.
func (s *Store) QueueDepthList(ctx context.Context, p *store.QueueDepthListParams) ([]store.QueueDepth, error) {
	from := p.Since.UTC().Truncate(time.Minute)
	if floor := p.Until.Add(-time.Duration(store.MaxDepthMinutes) * time.Minute); floor.After(from) {
		from = floor
	}
	members, err := s.rdb.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: s.prefix + "{" + p.Queue + "}:depth", ByScore: true,
		Start: unixMS(from), Stop: "(" + unixMS(p.Until)}).Result()
	if err != nil {
		return nil, fmt.Errorf("list the depth of %q: %w", p.Queue, err)
	}
	out := make([]store.QueueDepth, 0, len(members))
	step := p.DepthStepMinutes() * 60_000
	for _, m := range members {
		f := strings.Split(m, ":") // minute:available:scheduled, numbers only
		if len(f) != 3 {
			return nil, fmt.Errorf("list the depth of %q: bad sample %q", p.Queue, m)
		}
		a, _ := strconv.ParseInt(f[1], 10, 64)
		sc, _ := strconv.ParseInt(f[2], 10, 64)
		d := store.QueueDepth{Queue: p.Queue, Minute: msTime(f[0]), Available: a, Scheduled: sc}
		// One sample per step: members come by minute, so a step's are
		// together; keep its deepest.
		if n := len(out); n > 0 && out[n-1].Minute.UnixMilli()/step == d.Minute.UnixMilli()/step {
			if a+sc > out[n-1].Available+out[n-1].Scheduled {
				out[n-1] = d
			}
			continue
		}
		out = append(out, d)
	}
	return out, nil
}
