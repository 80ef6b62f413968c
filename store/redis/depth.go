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

// QueueDepthList reads the hours the range holds whole from the queue's
// zset of each hour's deepest sample, when the step is a whole number of
// hours, and the rest from its depth zset (store.WholeHours).
func (s *Store) QueueDepthList(ctx context.Context, p *store.QueueDepthListParams) ([]store.QueueDepth, error) {
	from := p.Since.UTC().Truncate(time.Minute)
	if floor := p.Until.Add(-time.Duration(store.MaxDepthMinutes) * time.Minute); floor.After(from) {
		from = floor
	}
	h0, h1 := store.WholeHours(from, p.Until, p.DepthStepMinutes())
	members, err := s.zranges(ctx, p.Queue, zrange{"depth", from, h0}, zrange{"dh", h0, h1}, zrange{"depth", h1, p.Until})
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

// zrange is a score range [from, to) of one of a queue's zsets.
type zrange struct {
	set      string
	from, to time.Time
}

// zranges reads ranges of queue q's zsets in one round trip and returns
// their members in the order of the ranges.
func (s *Store) zranges(ctx context.Context, q string, ranges ...zrange) ([]string, error) {
	cmds := make([]*goredis.StringSliceCmd, len(ranges))
	_, err := s.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
		for i, r := range ranges {
			cmds[i] = pl.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: s.qkey(q, r.set), ByScore: true,
				Start: unixMS(r.from), Stop: "(" + unixMS(r.to)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var members []string
	for _, c := range cmds {
		members = append(members, c.Val()...)
	}
	return members, nil
}
