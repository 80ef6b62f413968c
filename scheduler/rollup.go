package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tetherq/tether/store"
)

// depthSampler keeps the per-minute history of each queue's backlog that
// the queue page charts: at the first tick of every minute it reads the
// queue counts (one cheap read, whatever the number of jobs) and records
// each queue's available and scheduled jobs, the deepest MaxDepthQueues
// queues when there are more. Every replica samples; the last sample of a
// minute stands. It is routine, so it never logs.
type depthSampler struct {
	store store.Store
	done  time.Time // the minute last sampled
}

func (d *depthSampler) runOnce(ctx context.Context, now time.Time) (int, error) {
	minute := now.UTC().Truncate(time.Minute)
	if minute.Equal(d.done) {
		return 0, nil
	}
	queues, err := d.store.QueueList(ctx, &store.QueueListParams{Now: now})
	if err != nil {
		return 0, fmt.Errorf("sample queue depths: %w", err)
	}
	depths := make([]store.QueueDepth, len(queues))
	for i, q := range queues {
		depths[i] = store.QueueDepth{Queue: q.Name, Available: q.Counts[store.StateAvailable],
			Scheduled: q.Counts[store.StateScheduled]}
	}
	if len(depths) > store.MaxDepthQueues {
		slices.SortFunc(depths, func(a, b store.QueueDepth) int {
			return cmp.Or(cmp.Compare(b.Available+b.Scheduled, a.Available+a.Scheduled), cmp.Compare(a.Queue, b.Queue))
		})
		depths = depths[:store.MaxDepthQueues]
	}
	n, err := d.store.QueueDepthRoll(ctx, &store.QueueDepthRollParams{Depths: depths, Now: now})
	if err != nil {
		return n, fmt.Errorf("sample queue depths: %w", err)
	}
	d.done = minute
	return n, nil
}

// minuteRoller rolls up what finished in each minute once it has settled
// (MinuteSettle after its end): at most maxRolledPerTick minutes a tick,
// starting rollBack before the node started. Replicas roll the same
// minutes and write the same rows. It is routine, so it never logs.
type minuteRoller struct {
	store store.Store
	next  time.Time // the next minute to roll; zero before the first tick
}

const (
	// rollBack is how far back a starting node rolls: the minutes a
	// restart may have missed.
	rollBack = 10 * time.Minute
	// maxRolledPerTick bounds one tick's rolls.
	maxRolledPerTick = 3
)

func (r *minuteRoller) runOnce(ctx context.Context, now time.Time) (int, error) {
	if r.next.IsZero() {
		r.next = now.UTC().Truncate(time.Minute).Add(-rollBack)
	}
	total := 0
	for range maxRolledPerTick {
		if now.Before(r.next.Add(time.Minute + store.MinuteSettle)) {
			break
		}
		n, err := r.store.QueueMinuteRoll(ctx, &store.QueueMinuteRollParams{Minute: r.next, Now: now})
		total += n
		if err != nil {
			return total, fmt.Errorf("roll up the minute %s: %w", r.next.Format(time.RFC3339), err)
		}
		r.next = r.next.Add(time.Minute)
	}
	return total, nil
}
