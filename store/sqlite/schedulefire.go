package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tetherq/tether/store"
)

// ScheduleFire is one transaction: the compare-and-set on (name,
// next_fire_at, version), the overlap check, the jobs inserted by
// JobEnqueue's own path (counts and wake-ups with them), the counters.
func (s *Store) ScheduleFire(ctx context.Context, p *store.ScheduleFireParams) (*store.ScheduleFireResult, error) {
	res := &store.ScheduleFireResult{}
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		*res = store.ScheduleFireResult{}
		var row struct {
			Overlap   string         `db:"overlap"`
			LastJobID sql.NullString `db:"last_job_id"`
		}
		err := tx.GetContext(ctx, &row, `SELECT overlap, last_job_id FROM schedules
			WHERE name = ? AND next_fire_at = ? AND version = ?`, p.Name, toMS(p.NextFireAt), p.Version)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil // another fire, or a write, came first
		}
		if err != nil {
			return false, fmt.Errorf("read schedule %q: %w", p.Name, err)
		}
		res.Won = true
		jobs := p.Jobs
		if store.Overlap(row.Overlap) == store.OverlapSkip {
			busy, err := unfinished(ctx, tx, row.LastJobID)
			if err != nil {
				return false, err
			}
			jobs = store.OverlapKeep(jobs, busy)
			res.Skipped = int64(len(p.Jobs) - len(jobs))
		}
		if res.Jobs, err = insertFired(ctx, tx, jobs, p.Now); err != nil {
			return false, err
		}
		_, err = tx.ExecContext(ctx, `UPDATE schedules SET next_fire_at = ?, missed_total = missed_total + ?,
			skipped_total = skipped_total + ? WHERE name = ?`, toMS(p.Next), p.Missed, res.Skipped, p.Name)
		if err != nil {
			return false, fmt.Errorf("advance schedule %q: %w", p.Name, err)
		}
		return len(res.Jobs) > 0, recordFired(ctx, tx, p.Name, res.Jobs)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ScheduleTrigger enqueues the schedule's job now, overlap aside.
func (s *Store) ScheduleTrigger(ctx context.Context, p *store.ScheduleTriggerParams) (*store.Job, error) {
	var out *store.Job
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		sc, err := getSchedule(ctx, tx, p.Name)
		if err != nil {
			return false, err
		}
		now := store.Trunc(p.Now)
		jobs, err := insertFired(ctx, tx, []store.JobSpec{sc.JobSpec(now, now)}, now)
		if err != nil {
			return false, err
		}
		out = jobs[0]
		return true, recordFired(ctx, tx, p.Name, jobs)
	})
	return out, err
}

// unfinished reports whether the job of id (none: false) is unfinished.
func unfinished(ctx context.Context, tx *txn, id sql.NullString) (bool, error) {
	if !id.Valid {
		return false, nil
	}
	var state string
	err := tx.GetContext(ctx, &state, `SELECT state FROM jobs WHERE id = ?`, id.String)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // deleted or pruned: finished as far as overlap goes
	}
	if err != nil {
		return false, fmt.Errorf("read the last fired job: %w", err)
	}
	return !store.State(state).Finished(), nil
}

// insertFired inserts a fire's jobs as JobEnqueue does.
func insertFired(ctx context.Context, tx *txn, specs []store.JobSpec, now time.Time) ([]*store.Job, error) {
	ins, err := tx.stmt(ctx, insertJob)
	if err != nil {
		return nil, err
	}
	now = store.Trunc(now)
	jobs := make([]*store.Job, 0, len(specs))
	for i := range specs {
		spec := specs[i]
		spec.Normalize(now)
		j, _, err := enqueueOne(ctx, tx, ins, &spec, now)
		if err != nil {
			return nil, fmt.Errorf("enqueue fired job: %w", err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// recordFired adds the jobs to the schedule's fires and makes the last one
// its last fire.
func recordFired(ctx context.Context, tx *txn, name string, jobs []*store.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	last := jobs[len(jobs)-1]
	_, err := tx.ExecContext(ctx, `UPDATE schedules SET fires_total = fires_total + ?, last_fire_at = ?,
		last_job_id = ? WHERE name = ?`, len(jobs), toMS(*last.ScheduledFor), last.ID, name)
	if err != nil {
		return fmt.Errorf("count the fires of %q: %w", name, err)
	}
	return nil
}
