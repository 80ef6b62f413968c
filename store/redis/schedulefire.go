package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tetherq/tether/store"
)

// ScheduleFire is one script (schedfire.lua): the compare-and-set, the
// overlap check, the inserts by enqueue.lua's own path, the counters.
func (s *Store) ScheduleFire(ctx context.Context, p *store.ScheduleFireParams) (*store.ScheduleFireResult, error) {
	jobs, st, err := s.fire(ctx, p.Name, p.NextFireAt, p.Version, p.Next, p.Missed, false, p.Jobs, p.Now)
	if errors.Is(err, store.ErrLeaseLost) {
		return &store.ScheduleFireResult{}, nil // another fire, or a write, came first
	}
	if err != nil {
		return nil, err
	}
	skipped, _ := st.rest[0].(int64)
	return &store.ScheduleFireResult{Won: true, Jobs: jobs, Skipped: skipped}, nil
}

// ScheduleTrigger enqueues the schedule's job now, overlap aside: the job
// is built from the schedule as read, and inserted if its version is still
// the same.
func (s *Store) ScheduleTrigger(ctx context.Context, p *store.ScheduleTriggerParams) (*store.Job, error) {
	now := store.Trunc(p.Now)
	for range scheduleTries {
		sc, err := s.ScheduleGet(ctx, &store.ScheduleGetParams{Name: p.Name})
		if err != nil {
			return nil, err
		}
		spec := sc.JobSpec(now, now)
		jobs, _, err := s.fire(ctx, p.Name, sc.NextFireAt, sc.Version, sc.NextFireAt, 0, true, []store.JobSpec{spec}, now)
		if errors.Is(err, store.ErrLeaseLost) {
			continue // rewritten between the read and the insert
		}
		if err != nil {
			return nil, err
		}
		return jobs[0], nil
	}
	return nil, fmt.Errorf("trigger schedule %q: written concurrently %d times", p.Name, scheduleTries)
}

// fire runs schedfire.lua and returns the jobs it inserted. Returns
// ErrLeaseLost when the compare-and-set failed.
func (s *Store) fire(ctx context.Context, name string, nextAt time.Time, version int64, next time.Time, missed int64,
	trigger bool, specs []store.JobSpec, now time.Time) ([]*store.Job, status, error) {
	now = store.Trunc(now)
	built := make([]store.JobSpec, len(specs))
	ids := make([]string, len(specs))
	trig := "0"
	if trigger {
		trig = "1"
	}
	args := []any{name, unixMS(store.Trunc(nextAt)), version, unixMS(store.Trunc(next)), missed, trig, unixMS(now), len(specs)}
	for i := range specs {
		sp := specs[i]
		sp.Normalize(now)
		id, err := uuid.NewV7()
		if err != nil {
			return nil, status{}, fmt.Errorf("job id: %w", err)
		}
		built[i], ids[i] = sp, id.String()
		args = append(append(args, jobArgs(ids[i], &sp)...), unixMS(*sp.ScheduledFor))
	}
	st, err := s.run(ctx, "schedfire", args...)
	if err != nil {
		return nil, st, err
	}
	inserted := st.rest[1:]
	jobs := make([]*store.Job, len(inserted))
	for i := range inserted {
		jobs[i] = built[i].NewJob(ids[i], now) // the script keeps the first ones, in order
	}
	return jobs, st, nil
}
