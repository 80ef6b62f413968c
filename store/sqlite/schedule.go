package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tetherq/tether/store"
)

// scheduleColumns are the columns scheduleRow scans.
const scheduleColumns = `name, cron, every_ms, timezone, job, catchup, catchup_window_ms, max_catchup,
	overlap, jitter_ms, paused, source, spec_hash, next_fire_at, last_fire_at, last_job_id, fires_total,
	skipped_total, missed_total, version, created_at, updated_at`

type scheduleRow struct {
	Name         string         `db:"name"`
	Cron         sql.NullString `db:"cron"`
	EveryMS      sql.NullInt64  `db:"every_ms"`
	Timezone     string         `db:"timezone"`
	Job          string         `db:"job"`
	Catchup      string         `db:"catchup"`
	WindowMS     int64          `db:"catchup_window_ms"`
	MaxCatchup   int            `db:"max_catchup"`
	Overlap      string         `db:"overlap"`
	JitterMS     int64          `db:"jitter_ms"`
	Paused       bool           `db:"paused"`
	Source       string         `db:"source"`
	SpecHash     string         `db:"spec_hash"`
	NextFireAt   int64          `db:"next_fire_at"`
	LastFireAt   sql.NullInt64  `db:"last_fire_at"`
	LastJobID    sql.NullString `db:"last_job_id"`
	FiresTotal   int64          `db:"fires_total"`
	SkippedTotal int64          `db:"skipped_total"`
	MissedTotal  int64          `db:"missed_total"`
	Version      int64          `db:"version"`
	CreatedAt    int64          `db:"created_at"`
	UpdatedAt    int64          `db:"updated_at"`
}

func (r *scheduleRow) schedule() (*store.Schedule, error) {
	s := &store.Schedule{
		ScheduleSpec: store.ScheduleSpec{
			Name: r.Name, Cron: r.Cron.String, Every: millis(r.EveryMS.Int64), Timezone: r.Timezone,
			Catchup: store.Catchup(r.Catchup), CatchupWindow: millis(r.WindowMS), MaxCatchup: r.MaxCatchup,
			Overlap: store.Overlap(r.Overlap), Jitter: millis(r.JitterMS), Paused: r.Paused,
		},
		Source: store.ScheduleSource(r.Source), SpecHash: r.SpecHash, NextFireAt: fromMS(r.NextFireAt),
		LastFireAt: timePtr(r.LastFireAt), LastJobID: strPtr(r.LastJobID), FiresTotal: r.FiresTotal,
		SkippedTotal: r.SkippedTotal, MissedTotal: r.MissedTotal, Version: r.Version,
		CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt),
	}
	if err := json.Unmarshal([]byte(r.Job), &s.Job); err != nil {
		return nil, fmt.Errorf("schedule %q: job: %w", r.Name, err)
	}
	return s, nil
}

// getter is what reads a row: the read pool or a write transaction.
type getter interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}

func getSchedule(ctx context.Context, q getter, name string) (*store.Schedule, error) {
	var r scheduleRow
	err := q.GetContext(ctx, &r, `SELECT `+scheduleColumns+` FROM schedules WHERE name = ?`, name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read schedule %q: %w", name, err)
	}
	return r.schedule()
}

// ScheduleGet returns a schedule.
func (s *Store) ScheduleGet(ctx context.Context, p *store.ScheduleGetParams) (*store.Schedule, error) {
	sc, err := getSchedule(ctx, s.r, p.Name)
	return sc, mark(ctx, err)
}

// ScheduleList returns every schedule by name.
func (s *Store) ScheduleList(ctx context.Context, _ *store.ScheduleListParams) ([]*store.Schedule, error) {
	return s.selectSchedules(ctx, `SELECT `+scheduleColumns+` FROM schedules ORDER BY name`)
}

// ScheduleListDue returns the due schedules not paused, earliest first.
func (s *Store) ScheduleListDue(ctx context.Context, p *store.ScheduleListDueParams) ([]*store.Schedule, error) {
	return s.selectSchedules(ctx, `SELECT `+scheduleColumns+` FROM schedules
		WHERE paused = 0 AND next_fire_at <= ? ORDER BY next_fire_at, name LIMIT ?`,
		toMS(p.Now), store.LimitOr(p.Limit, store.ScheduleBatch))
}

func (s *Store) selectSchedules(ctx context.Context, query string, args ...any) ([]*store.Schedule, error) {
	var rows []scheduleRow
	if err := s.r.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, mark(ctx, fmt.Errorf("list schedules: %w", err))
	}
	out := make([]*store.Schedule, len(rows))
	for i := range rows {
		sc, err := rows[i].schedule()
		if err != nil {
			return nil, err
		}
		out[i] = sc
	}
	return out, nil
}

// writeSchedule inserts or replaces the whole row of sc.
func writeSchedule(ctx context.Context, tx *txn, sc *store.Schedule) error {
	job, err := json.Marshal(sc.Job)
	if err != nil {
		return err
	}
	var cron, every any
	if sc.Cron != "" {
		cron = sc.Cron
	} else {
		every = sc.Every.Milliseconds()
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO schedules (`+scheduleColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sc.Name, cron, every, sc.Timezone, string(job), sc.Catchup, sc.CatchupWindow.Milliseconds(),
		sc.MaxCatchup, sc.Overlap, sc.Jitter.Milliseconds(), sc.Paused, sc.Source, sc.SpecHash,
		toMS(sc.NextFireAt), nullTime(sc.LastFireAt), nullStr(sc.LastJobID), sc.FiresTotal, sc.SkippedTotal,
		sc.MissedTotal, sc.Version, toMS(sc.CreatedAt), toMS(sc.UpdatedAt))
	if err != nil {
		return fmt.Errorf("write schedule %q: %w", sc.Name, err)
	}
	return nil
}

// ScheduleUpsert creates or replaces a schedule (store.Upserted).
func (s *Store) ScheduleUpsert(ctx context.Context, p *store.ScheduleUpsertParams) (*store.ScheduleUpsertResult, error) {
	res := &store.ScheduleUpsertResult{}
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		old, err := getSchedule(ctx, tx, p.Spec.Name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		row, changed, err := store.Upserted(old, p)
		if err != nil {
			return false, err
		}
		*res = store.ScheduleUpsertResult{Schedule: row, Created: old == nil, Changed: changed}
		if !changed {
			return false, nil
		}
		return false, writeSchedule(ctx, tx, row)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ScheduleSetPaused pauses or resumes a schedule.
func (s *Store) ScheduleSetPaused(ctx context.Context, p *store.ScheduleSetPausedParams) (*store.Schedule, error) {
	var out *store.Schedule
	err := s.tx(ctx, func(tx *txn) (bool, error) {
		old, err := getSchedule(ctx, tx, p.Name)
		if err != nil {
			return false, err
		}
		out = old.WithPaused(p.Paused, p.Now)
		return false, writeSchedule(ctx, tx, out)
	})
	return out, err
}

// ScheduleDelete deletes a schedule, leaving its jobs.
func (s *Store) ScheduleDelete(ctx context.Context, p *store.ScheduleDeleteParams) error {
	return s.tx(ctx, func(tx *txn) (bool, error) {
		var source string
		err := tx.GetContext(ctx, &source, `SELECT source FROM schedules WHERE name = ?`, p.Name)
		if errors.Is(err, sql.ErrNoRows) {
			return false, store.ErrNotFound
		}
		if err != nil {
			return false, err
		}
		if p.Source != "" && store.ScheduleSource(source) != p.Source {
			return false, store.ErrInvalidState
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM schedules WHERE name = ?`, p.Name)
		return false, err
	})
}
