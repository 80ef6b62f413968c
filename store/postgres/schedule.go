package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherq/tether/store"
)

// scheduleColumns are the columns scanSchedule reads.
const scheduleColumns = `name, cron, every_ms, timezone, job, catchup, catchup_window_ms, max_catchup,
	overlap, jitter_ms, paused, source, spec_hash, next_fire_at, last_fire_at, last_job_id::text, fires_total,
	skipped_total, missed_total, version, created_at, updated_at`

func scanSchedule(row pgx.Row) (*store.Schedule, error) {
	var (
		s                        store.Schedule
		cron, job                *string
		every                    *int64
		window, jitter           int64
		catchup, overlap, source string
		next, created, updated   time.Time
		lastFire                 *time.Time
	)
	err := row.Scan(&s.Name, &cron, &every, &s.Timezone, &job, &catchup, &window, &s.MaxCatchup, &overlap,
		&jitter, &s.Paused, &source, &s.SpecHash, &next, &lastFire, &s.LastJobID, &s.FiresTotal,
		&s.SkippedTotal, &s.MissedTotal, &s.Version, &created, &updated)
	if err != nil {
		return nil, err
	}
	s.Cron, s.Every = deref(cron), millis(deref(every))
	s.Catchup, s.CatchupWindow, s.Overlap = store.Catchup(catchup), millis(window), store.Overlap(overlap)
	s.Jitter, s.Source = millis(jitter), store.ScheduleSource(source)
	s.NextFireAt, s.LastFireAt, s.CreatedAt, s.UpdatedAt = next.UTC(), utc(lastFire), created.UTC(), updated.UTC()
	if err := json.Unmarshal([]byte(deref(job)), &s.Job); err != nil {
		return nil, fmt.Errorf("schedule %q: job: %w", s.Name, err)
	}
	return &s, nil
}

// getSchedule reads a schedule; lock takes its row for the transaction.
func getSchedule(ctx context.Context, q querier, name string, lock bool) (*store.Schedule, error) {
	query := `SELECT ` + scheduleColumns + ` FROM schedules WHERE name = $1`
	if lock {
		query += ` FOR UPDATE`
	}
	s, err := scanSchedule(q.QueryRow(ctx, query, name))
	if isNoRows(err) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read schedule %q: %w", name, err)
	}
	return s, nil
}

// ScheduleGet returns a schedule.
func (s *Store) ScheduleGet(ctx context.Context, p *store.ScheduleGetParams) (*store.Schedule, error) {
	return getSchedule(ctx, s.pool, p.Name, false)
}

// ScheduleList returns every schedule by name.
func (s *Store) ScheduleList(ctx context.Context, _ *store.ScheduleListParams) ([]*store.Schedule, error) {
	return s.selectSchedules(ctx, `SELECT `+scheduleColumns+` FROM schedules ORDER BY name`)
}

// ScheduleListDue returns the due schedules not paused, earliest first.
func (s *Store) ScheduleListDue(ctx context.Context, p *store.ScheduleListDueParams) ([]*store.Schedule, error) {
	return s.selectSchedules(ctx, `SELECT `+scheduleColumns+` FROM schedules
		WHERE NOT paused AND next_fire_at <= $1 ORDER BY next_fire_at, name LIMIT $2`,
		store.Trunc(p.Now), store.LimitOr(p.Limit, store.ScheduleBatch))
}

func (s *Store) selectSchedules(ctx context.Context, query string, args ...any) ([]*store.Schedule, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	defer rows.Close()
	out := []*store.Schedule{}
	for rows.Next() {
		sc, err := scanSchedule(rows)
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

const insertScheduleSQL = `INSERT INTO schedules (name, cron, every_ms, timezone, job, catchup,
	catchup_window_ms, max_catchup, overlap, jitter_ms, paused, source, spec_hash, next_fire_at,
	last_fire_at, last_job_id, fires_total, skipped_total, missed_total, version, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::uuid, $17, $18, $19,
		$20, $21, $22)`

// scheduleArgs are insertScheduleSQL's arguments for sc.
func scheduleArgs(sc *store.Schedule) []any {
	job, _ := json.Marshal(sc.Job) // plain data: cannot fail
	var cron *string
	var every *int64
	if sc.Cron != "" {
		cron = &sc.Cron
	} else {
		ms := sc.Every.Milliseconds()
		every = &ms
	}
	return []any{sc.Name, cron, every, sc.Timezone, string(job), string(sc.Catchup), sc.CatchupWindow.Milliseconds(),
		sc.MaxCatchup, string(sc.Overlap), sc.Jitter.Milliseconds(), sc.Paused, string(sc.Source), sc.SpecHash,
		sc.NextFireAt, sc.LastFireAt, sc.LastJobID, sc.FiresTotal, sc.SkippedTotal, sc.MissedTotal, sc.Version,
		sc.CreatedAt, sc.UpdatedAt}
}

// writeSchedule replaces the whole row of sc, which the transaction holds.
func writeSchedule(ctx context.Context, tx pgx.Tx, sc *store.Schedule) error {
	_, err := tx.Exec(ctx, insertScheduleSQL+`
		ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, every_ms = excluded.every_ms,
			timezone = excluded.timezone, job = excluded.job, catchup = excluded.catchup,
			catchup_window_ms = excluded.catchup_window_ms, max_catchup = excluded.max_catchup,
			overlap = excluded.overlap, jitter_ms = excluded.jitter_ms, paused = excluded.paused,
			source = excluded.source, spec_hash = excluded.spec_hash, next_fire_at = excluded.next_fire_at,
			last_fire_at = excluded.last_fire_at, last_job_id = excluded.last_job_id,
			fires_total = excluded.fires_total, skipped_total = excluded.skipped_total,
			missed_total = excluded.missed_total, version = excluded.version,
			created_at = excluded.created_at, updated_at = excluded.updated_at`, scheduleArgs(sc)...)
	if err != nil {
		return fmt.Errorf("write schedule %q: %w", sc.Name, err)
	}
	return nil
}

// ScheduleUpsert creates or replaces a schedule (store.Upserted). Two
// replicas creating the same schedule at once: the second's insert waits
// for the first's, then conflicts, and its transaction runs again, finding
// the row.
func (s *Store) ScheduleUpsert(ctx context.Context, p *store.ScheduleUpsertParams) (*store.ScheduleUpsertResult, error) {
	res := &store.ScheduleUpsertResult{}
	var err error
	for range maxTries {
		err = s.tx(ctx, func(tx pgx.Tx) error {
			old, err := getSchedule(ctx, tx, p.Spec.Name, true)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			row, changed, err := store.Upserted(old, p)
			if err != nil {
				return err
			}
			*res = store.ScheduleUpsertResult{Schedule: row, Created: old == nil, Changed: changed}
			if !changed {
				return nil
			}
			if old == nil {
				return insertSchedule(ctx, tx, row)
			}
			return writeSchedule(ctx, tx, row)
		})
		if !errors.Is(err, errScheduleTaken) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// errScheduleTaken means a concurrent transaction created the schedule
// this one found missing.
var errScheduleTaken = errors.New("schedule created concurrently")

// insertSchedule writes a new row, or returns errScheduleTaken when one of
// its name committed since the read.
func insertSchedule(ctx context.Context, tx pgx.Tx, sc *store.Schedule) error {
	tag, err := tx.Exec(ctx, insertScheduleSQL+` ON CONFLICT (name) DO NOTHING`, scheduleArgs(sc)...)
	if err != nil {
		return fmt.Errorf("create schedule %q: %w", sc.Name, err)
	}
	if tag.RowsAffected() == 0 {
		return errScheduleTaken
	}
	return nil
}

// ScheduleSetPaused pauses or resumes a schedule.
func (s *Store) ScheduleSetPaused(ctx context.Context, p *store.ScheduleSetPausedParams) (*store.Schedule, error) {
	var out *store.Schedule
	err := s.tx(ctx, func(tx pgx.Tx) error {
		old, err := getSchedule(ctx, tx, p.Name, true)
		if err != nil {
			return err
		}
		out = old.WithPaused(p.Paused, p.Now)
		return writeSchedule(ctx, tx, out)
	})
	return out, err
}

// ScheduleDelete deletes a schedule, leaving its jobs.
func (s *Store) ScheduleDelete(ctx context.Context, p *store.ScheduleDeleteParams) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		var source string
		err := tx.QueryRow(ctx, `SELECT source FROM schedules WHERE name = $1 FOR UPDATE`, p.Name).Scan(&source)
		if isNoRows(err) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if p.Source != "" && store.ScheduleSource(source) != p.Source {
			return store.ErrInvalidState
		}
		_, err = tx.Exec(ctx, `DELETE FROM schedules WHERE name = $1`, p.Name)
		return err
	})
}
