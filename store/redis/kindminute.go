package redis

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetherq/tether/store"
)

// finishedChunk bounds one run of finished.lua: about 10 ms of the server.
const finishedChunk = 1000

// QueueMinuteRoll reads the minute's finished jobs a chunk at a time
// (finished.lua), queue by queue, folds them here, and writes the rows in
// one script (minutes.lua).
func (s *Store) QueueMinuteRoll(ctx context.Context, p *store.QueueMinuteRollParams) (int, error) {
	from := p.Minute.UTC().Truncate(time.Minute)
	queues, err := s.rdb.SMembers(ctx, s.prefix+"queues").Result()
	if err != nil {
		return 0, fmt.Errorf("read the jobs finished in a minute: %w", err)
	}
	slices.Sort(queues)
	var jobs []store.FinishedJob
	for _, q := range queues {
		for _, set := range []string{"done", "dead"} {
			for offset := 0; len(jobs) < store.MaxRolledJobs; offset += finishedChunk {
				v, err := s.call(ctx, "finished", q, set, unixMS(from), unixMS(from.Add(time.Minute)), offset, finishedChunk)
				if err != nil {
					return 0, fmt.Errorf("read the jobs finished in a minute: %w", err)
				}
				rows := asSlice(v)
				if len(rows) == 0 {
					break
				}
				for _, r := range rows[:len(rows)-1] {
					if f := asSlice(r); len(f) == 5 {
						jobs = append(jobs, finishedJob(q, f))
					}
				}
				if walked, _ := rows[len(rows)-1].(int64); walked < finishedChunk {
					break
				}
			}
		}
	}
	jobs = jobs[:min(len(jobs), store.MaxRolledJobs)]
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

// finishedJob decodes one row of finished.lua.
func finishedJob(queue string, f []any) store.FinishedJob {
	j := store.FinishedJob{Queue: queue, Kind: asString(f[0]), State: store.State(asString(f[1])),
		RunAt: msTime(asString(f[2])), FinishedAt: msTime(asString(f[4]))}
	if sa := asString(f[3]); sa != "" {
		t := msTime(sa)
		j.StartedAt = &t
	}
	return j
}

// QueueMinuteList reads the hours the range holds whole from the queue's
// zset of hours, when the step is a whole number of hours, and the rest
// from its zset of minutes (store.WholeHours): three score ranges, in time
// order, in one round trip.
func (s *Store) QueueMinuteList(ctx context.Context, p *store.QueueMinuteListParams) ([]store.KindMinute, error) {
	from := p.Since.UTC().Truncate(time.Minute)
	if floor := p.Until.Add(-time.Duration(store.MaxDepthMinutes) * time.Minute); floor.After(from) {
		from = floor
	}
	h0, h1 := store.WholeHours(from, p.Until, p.StepMinutes())
	members, err := s.zranges(ctx, p.Queue, zrange{"min", from, h0}, zrange{"hr", h0, h1}, zrange{"min", h1, p.Until})
	if err != nil {
		return nil, fmt.Errorf("list the minutes of %q: %w", p.Queue, err)
	}
	// Members come by minute (or hour), then kind: a step's are together;
	// sum each kind's within it.
	out := make([]store.KindMinute, 0, len(members))
	step := p.StepMinutes() * 60_000
	first := 0 // where the current step's entries start in out
	for _, m := range members {
		f := strings.Split(m, "\t")
		if len(f) != 6 {
			return nil, fmt.Errorf("list the minutes of %q: bad entry %q", p.Queue, m)
		}
		succ, _ := strconv.ParseInt(f[2], 10, 64)
		dead, _ := strconv.ParseInt(f[3], 10, 64)
		ms, _ := strconv.ParseInt(f[0], 10, 64)
		at := fromMS(ms / step * step)
		if len(out) > 0 && !out[len(out)-1].Minute.Equal(at) {
			first = len(out)
		}
		i := slices.IndexFunc(out[first:], func(k store.KindMinute) bool { return k.Kind == f[1] })
		if i < 0 {
			out = append(out, store.KindMinute{Queue: p.Queue, Kind: f[1], Minute: at, Wait: store.Histogram{}, Run: store.Histogram{}})
			i = len(out) - 1 - first
		}
		k := &out[first+i]
		k.Succeeded += succ
		k.Dead += dead
		k.Wait.Merge(store.ParseHistogram(f[4]))
		k.Run.Merge(store.ParseHistogram(f[5]))
	}
	for i := 0; i < len(out); {
		// Within a step, kinds by name, as the SQL backends order them.
		j := i
		for j < len(out) && out[j].Minute.Equal(out[i].Minute) {
			j++
		}
		slices.SortFunc(out[i:j], func(a, b store.KindMinute) int { return strings.Compare(a.Kind, b.Kind) })
		i = j
	}
	return out, nil
}
