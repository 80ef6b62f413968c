package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// ScheduleFire is one transaction: the compare-and-set on (name,
// next_fire_at, version) locks the row, so a replica firing the same slot
// waits, then finds next_fire_at moved and changes nothing; the jobs go in
// by JobEnqueue's own insert (its triggers count them and wake leasers).
func (s *Store) ScheduleFire(ctx context.Context, p *store.ScheduleFireParams) (*store.ScheduleFireResult, error) {
	res := &store.ScheduleFireResult{}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		*res = store.ScheduleFireResult{}
		var overlap string
		var lastJob *string
		err := tx.QueryRow(ctx, `SELECT overlap, last_job_id::text FROM schedules
			WHERE name = $1 AND next_fire_at = $2 AND version = $3 FOR UPDATE`,
			p.Name, store.Trunc(p.NextFireAt), p.Version).Scan(&overlap, &lastJob)
		if isNoRows(err) {
			return nil // another fire, or a write, came first
		}
		if err != nil {
			return fmt.Errorf("read schedule %q: %w", p.Name, err)
		}
		res.Won = true
		jobs := p.Jobs
		if store.Overlap(overlap) == store.OverlapSkip {
			busy, err := unfinished(ctx, tx, lastJob)
			if err != nil {
				return err
			}
			jobs = store.OverlapKeep(jobs, busy)
			res.Skipped = int64(len(p.Jobs) - len(jobs))
		}
		if res.Jobs, err = insertFired(ctx, tx, jobs, p.Now); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE schedules SET next_fire_at = $2, missed_total = missed_total + $3,
			skipped_total = skipped_total + $4 WHERE name = $1`, p.Name, store.Trunc(p.Next), p.Missed, res.Skipped)
		if err != nil {
			return fmt.Errorf("advance schedule %q: %w", p.Name, err)
		}
		return recordFired(ctx, tx, p.Name, res.Jobs)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ScheduleTrigger enqueues the schedule's job now, overlap aside.
func (s *Store) ScheduleTrigger(ctx context.Context, p *store.ScheduleTriggerParams) (*store.Job, error) {
	var out *store.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		sc, err := getSchedule(ctx, tx, p.Name, true)
		if err != nil {
			return err
		}
		now := store.Trunc(p.Now)
		jobs, err := insertFired(ctx, tx, []store.JobSpec{sc.JobSpec(now, now)}, now)
		if err != nil {
			return err
		}
		out = jobs[0]
		return recordFired(ctx, tx, p.Name, jobs)
	})
	return out, err
}

// unfinished reports whether the job of id (nil: false) is unfinished.
func unfinished(ctx context.Context, tx pgx.Tx, id *string) (bool, error) {
	if id == nil {
		return false, nil
	}
	var state string
	err := tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, *id).Scan(&state)
	if isNoRows(err) {
		return false, nil // deleted or pruned: finished as far as overlap goes
	}
	if err != nil {
		return false, fmt.Errorf("read the last fired job: %w", err)
	}
	return !store.State(state).Finished(), nil
}

// insertFired inserts a fire's jobs with JobEnqueue's batch insert.
func insertFired(ctx context.Context, tx pgx.Tx, specs []store.JobSpec, now time.Time) ([]*store.Job, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	b := newBatch(specs, store.Trunc(now))
	if err := b.insert(ctx, tx); err != nil {
		return nil, err
	}
	return b.jobs, nil
}

// recordFired adds the jobs to the schedule's fires and makes the last one
// its last fire.
func recordFired(ctx context.Context, tx pgx.Tx, name string, jobs []*store.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	last := jobs[len(jobs)-1]
	_, err := tx.Exec(ctx, `UPDATE schedules SET fires_total = fires_total + $2, last_fire_at = $3,
		last_job_id = $4 WHERE name = $1`, name, len(jobs), *last.ScheduledFor, last.ID)
	if err != nil {
		return fmt.Errorf("count the fires of %q: %w", name, err)
	}
	return nil
}
