package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// scheduleMaxBatches bounds one tick's fires: a store whose due list keeps
// coming back full (thousands of schedules due at once, or a fire that
// keeps failing) cannot spin the loop; the rest waits for the next tick.
const scheduleMaxBatches = 10

// firer fires due schedules. Every node runs it: the store's
// compare-and-set on (name, next_fire_at, version) lets exactly one node
// fire each slot, and every node plans a fire the same way from the same
// row (store.Schedule.Plan), so it does not matter which.
type firer struct {
	store   store.Store
	tick    time.Duration // a slot within one tick of now is on time
	metrics *metrics
}

// runOnce fires the due schedules in batches and returns how many jobs
// this node enqueued. A schedule that fails to fire is reported and the
// others still fire.
func (f *firer) runOnce(ctx context.Context, now time.Time) (int, error) {
	fired := 0
	var errs []error
	for range scheduleMaxBatches {
		due, err := f.store.ScheduleListDue(ctx, &store.ScheduleListDueParams{Limit: store.ScheduleBatch, Now: now})
		if err != nil {
			return fired, fmt.Errorf("list due schedules: %w", errors.Join(append(errs, err)...))
		}
		for _, s := range due {
			n, err := f.fire(ctx, s, now)
			fired += n
			if err != nil {
				errs = append(errs, err)
			}
		}
		if len(due) < store.ScheduleBatch || len(errs) > 0 {
			break
		}
	}
	return fired, errors.Join(errs...)
}

// fire plans and fires one due schedule; it returns the jobs enqueued, 0
// when another node won the slot.
func (f *firer) fire(ctx context.Context, s *store.Schedule, now time.Time) (int, error) {
	plan := s.Plan(now, f.tick)
	if plan.Next.IsZero() {
		return 0, fmt.Errorf("schedule %q fires no more: pause or replace it", s.Name)
	}
	res, err := f.store.ScheduleFire(ctx, &store.ScheduleFireParams{
		Name: s.Name, NextFireAt: s.NextFireAt, Version: s.Version,
		Jobs: s.Jobs(plan), Missed: plan.Missed, Next: plan.Next, Now: now,
	})
	if err != nil {
		return 0, fmt.Errorf("fire schedule %q: %w", s.Name, err)
	}
	if res.Won {
		f.metrics.observeFire(s.Name, res, plan.Missed, now)
	}
	return len(res.Jobs), nil
}
