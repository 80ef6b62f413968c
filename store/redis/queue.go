package redis

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tetherq/tether/store"
)

// QueueList reads every queue's counts from its index cardinalities and
// counters: O(queues), never O(jobs). Queues with no jobs are left out
// unless paused or limited.
func (s *Store) QueueList(ctx context.Context, _ *store.QueueListParams) ([]*store.Queue, error) {
	_, queues, err := s.queues(ctx, "")
	if err != nil {
		return nil, err
	}
	return queues, nil
}

// queues runs queues.lua for one queue or all ("") and returns the rescue
// total and the queues, by name.
func (s *Store) queues(ctx context.Context, name string) (int64, []*store.Queue, error) {
	v, err := s.call(ctx, "queues", name)
	if err != nil {
		return 0, nil, fmt.Errorf("read queues: %w", err)
	}
	r := asSlice(v)
	rescues, _ := strconv.ParseInt(asString(r[0]), 10, 64)
	var out []*store.Queue
	for _, row := range asSlice(r[1]) {
		f := asSlice(row)
		q := &store.Queue{Name: asString(f[0]), Counts: make(map[store.State]int64, len(store.States))}
		var total int64
		for i, st := range store.States {
			n, _ := f[1+i].(int64)
			q.Counts[st] = n
			total += n
		}
		q.Paused = asString(f[7]) == "1"
		q.Retrying, _ = f[8].(int64)
		if oldest, ok := f[9].(string); ok {
			t := msTime(oldest)
			q.OldestAvailableAt = &t
		}
		if q.Limits, err = decodeLimits(f[10]); err != nil {
			return 0, nil, fmt.Errorf("queue %q: %w", q.Name, err)
		}
		q.Throttled = decodeThrottles(f[11])
		if total > 0 || q.Paused || q.Limits != nil || name != "" {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *store.Queue) int { return strings.Compare(a.Name, b.Name) })
	return rescues, out, nil
}

// QueueSetPaused pauses or resumes a queue; resuming wakes leasers.
func (s *Store) QueueSetPaused(ctx context.Context, p *store.QueueSetPausedParams) (*store.Queue, error) {
	paused := "0"
	if p.Paused {
		paused = "1"
	}
	if _, err := s.run(ctx, "pause", p.Name, paused); err != nil {
		return nil, fmt.Errorf("set %q paused=%v: %w", p.Name, p.Paused, err)
	}
	_, queues, err := s.queues(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	return queues[0], nil
}

// StatsGet sums the queues' counts.
func (s *Store) StatsGet(ctx context.Context, _ *store.StatsGetParams) (*store.Stats, error) {
	rescues, queues, err := s.queues(ctx, "")
	if err != nil {
		return nil, err
	}
	st := &store.Stats{Jobs: store.ZeroCounts(), RescuesTotal: rescues}
	for _, q := range queues {
		for s, n := range q.Counts {
			st.Jobs[s] += n
		}
	}
	return st, nil
}

// CountFold has nothing to fold: a queue's counts are the cardinalities of
// its per-state sets, which every script keeps in step.
func (s *Store) CountFold(context.Context, *store.CountFoldParams) (int, error) { return 0, nil }
