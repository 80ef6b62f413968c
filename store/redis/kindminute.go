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

// QueueMinuteRoll reads the minute's finished jobs in one script
// (finished.lua), folds them here, and writes the rows in another
// (minutes.lua).
func (s *Store) QueueMinuteRoll(ctx context.Context, p *store.QueueMinuteRollParams) (int, error) {
	from := p.Minute.UTC().Truncate(time.Minute)
	v, err := s.call(ctx, "finished", unixMS(from), unixMS(from.Add(time.Minute)), store.MaxRolledJobs)
	if err != nil {
		return 0, fmt.Errorf("read the jobs finished in a minute: %w", err)
	}
	var jobs []store.FinishedJob
	for _, r := range asSlice(v) {
		f := asSlice(r)
		if len(f) != 6 {
			continue
		}
		j := store.FinishedJob{Queue: asString(f[0]), Kind: asString(f[1]), State: store.State(asString(f[2])),
			RunAt: msTime(asString(f[3])), FinishedAt: msTime(asString(f[5]))}
		if sa := asString(f[4]); sa != "" {
			t := msTime(sa)
			j.StartedAt = &t
		}
		jobs = append(jobs, j)
	}
	rolled := store.RollMinute(from, jobs)
	if len(rolled) == 0 {
		return 0, nil
	}
	args := []any{unixMS(from), unixMS(p.Now.Add(-store.DepthRetention)), int64(store.DepthRetention / time.Second)}
	for _, m := range rolled {
		args = append(args, m.Queue, strings.Join([]string{unixMS(from), m.Kind, strconv.FormatInt(m.Succeeded, 10),
			strconv.FormatInt(m.Dead, 10), m.Wait.String(), m.Run.String()}, "\t"))
	}
	n, err := s.call(ctx, "minutes", args...)
	if err != nil {
		return 0, fmt.Errorf("record a rolled minute: %w", err)
	}
	written, _ := n.(int64)
	return int(written), nil
}

// QueueMinuteList reads one score range of the queue's zset of minutes.
func (s *Store) QueueMinuteList(ctx context.Context, p *store.QueueMinuteListParams) ([]store.KindMinute, error) {
	from := p.Since.UTC().Truncate(time.Minute)
	if floor := p.Until.Add(-time.Duration(store.MaxDepthMinutes) * time.Minute); floor.After(from) {
		from = floor
	}
	members, err := s.rdb.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: s.prefix + "{" + p.Queue + "}:min", ByScore: true,
		Start: unixMS(from), Stop: "(" + unixMS(p.Until)}).Result()
	if err != nil {
		return nil, fmt.Errorf("list the minutes of %q: %w", p.Queue, err)
	}
	out := make([]store.KindMinute, 0, len(members))
	for _, m := range members {
		f := strings.Split(m, "\t")
		if len(f) != 6 {
			return nil, fmt.Errorf("list the minutes of %q: bad entry %q", p.Queue, m)
		}
		succ, _ := strconv.ParseInt(f[2], 10, 64)
		dead, _ := strconv.ParseInt(f[3], 10, 64)
		out = append(out, store.KindMinute{Queue: p.Queue, Kind: f[1], Minute: msTime(f[0]), Succeeded: succ, Dead: dead,
			Wait: store.ParseHistogram(f[4]), Run: store.ParseHistogram(f[5])})
	}
	return out, nil
}
