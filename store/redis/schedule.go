package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tetherq/tether/store"
)

// A schedule is the hash sc:<name>; schedules (score 0, so by name) lists
// them, scdue holds those not paused by next_fire_at, and sj:<name> the ids
// of the jobs each fired. Fields, by their short names:
const (
	scCron    = "c"   // "" for an interval schedule
	scEvery   = "e"   // ms, "0" for a cron schedule
	scZone    = "tz"  // time zone
	scJob     = "jb"  // the job template, JSON (store.ScheduleJob)
	scCatchup = "cu"  // catch-up policy
	scWindow  = "cw"  // catch-up window, ms
	scMaxCU   = "mc"  // max catch-up
	scOverlap = "o"   // overlap policy
	scJitter  = "ji"  // ms
	scPaused  = "p"   // "1" when paused
	scSource  = "src" // api | file
	scHash    = "h"   // spec hash
	scNext    = "nf"  // next_fire_at, ms
	scLast    = "lf"  // last_fire_at, ms
	scLastJob = "lj"  // last_job_id
	scFires   = "ft"
	scSkipped = "st"
	scMissed  = "mt"
	scVersion = "v"
	scCreated = "ca"
	scUpdated = "ua"
)

// scheduleTries bounds the compare-and-set rounds of a schedule's write
// racing other writes of the same schedule.
const scheduleTries = 5

func (s *Store) scKey(name string) string { return s.prefix + "sc:" + name }

// ScheduleGet returns a schedule.
func (s *Store) ScheduleGet(ctx context.Context, p *store.ScheduleGetParams) (*store.Schedule, error) {
	f, err := s.rdb.HGetAll(ctx, s.scKey(p.Name)).Result()
	if err != nil {
		return nil, fmt.Errorf("read schedule %q: %w", p.Name, err)
	}
	if len(f) == 0 {
		return nil, store.ErrNotFound
	}
	return decodeSchedule(p.Name, f)
}

// ScheduleList returns every schedule by name.
func (s *Store) ScheduleList(ctx context.Context, _ *store.ScheduleListParams) ([]*store.Schedule, error) {
	names, err := s.rdb.ZRange(ctx, s.prefix+"schedules", 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return s.readSchedules(ctx, names)
}

// ScheduleListDue returns the due schedules not paused, earliest first.
func (s *Store) ScheduleListDue(ctx context.Context, p *store.ScheduleListDueParams) ([]*store.Schedule, error) {
	names, err := s.rdb.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: s.prefix + "scdue", ByScore: true,
		Start: "-inf", Stop: unixMS(store.Trunc(p.Now)), Count: int64(store.LimitOr(p.Limit, store.ScheduleBatch)),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("list due schedules: %w", err)
	}
	return s.readSchedules(ctx, names)
}

// readSchedules reads the hashes of names in one round trip, leaving out
// those deleted since they were listed.
func (s *Store) readSchedules(ctx context.Context, names []string) ([]*store.Schedule, error) {
	cmds := make([]*goredis.MapStringStringCmd, len(names))
	_, err := s.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
		for i, n := range names {
			cmds[i] = pl.HGetAll(ctx, s.scKey(n))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read schedules: %w", err)
	}
	out := make([]*store.Schedule, 0, len(names))
	for i, c := range cmds {
		if f := c.Val(); len(f) > 0 {
			sc, err := decodeSchedule(names[i], f)
			if err != nil {
				return nil, err
			}
			out = append(out, sc)
		}
	}
	return out, nil
}

func decodeSchedule(name string, f map[string]string) (*store.Schedule, error) {
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(f[k], 10, 64)
		return n
	}
	sc := &store.Schedule{
		ScheduleSpec: store.ScheduleSpec{
			Name: name, Cron: f[scCron], Every: msDur(f[scEvery]), Timezone: f[scZone],
			Catchup: store.Catchup(f[scCatchup]), CatchupWindow: msDur(f[scWindow]), MaxCatchup: int(num(scMaxCU)),
			Overlap: store.Overlap(f[scOverlap]), Jitter: msDur(f[scJitter]), Paused: f[scPaused] == "1",
		},
		Source: store.ScheduleSource(f[scSource]), SpecHash: f[scHash], NextFireAt: msTime(f[scNext]),
		LastFireAt: optTime(f, scLast), LastJobID: optStr(f, scLastJob), FiresTotal: num(scFires),
		SkippedTotal: num(scSkipped), MissedTotal: num(scMissed), Version: num(scVersion),
		CreatedAt: msTime(f[scCreated]), UpdatedAt: msTime(f[scUpdated]),
	}
	if err := json.Unmarshal([]byte(f[scJob]), &sc.Job); err != nil {
		return nil, fmt.Errorf("schedule %q: job: %w", name, err)
	}
	return sc, nil
}

// put writes fields of a schedule read at version want (0: absent), or
// returns ErrConflict when another write came between.
func (s *Store) put(ctx context.Context, name string, want int64, fields ...any) error {
	_, err := s.run(ctx, "schedput", append([]any{name, want}, fields...)...)
	return err
}

// specFields are the fields of row's spec, paused, next fire, version and
// times: everything of a row but its fires.
func specFields(row *store.Schedule) []any {
	job, _ := json.Marshal(row.Job) // plain data: cannot fail
	paused := "0"
	if row.Paused {
		paused = "1"
	}
	return []any{scCron, row.Cron, scEvery, row.Every.Milliseconds(), scZone, row.Timezone, scJob, string(job),
		scCatchup, string(row.Catchup), scWindow, row.CatchupWindow.Milliseconds(), scMaxCU, row.MaxCatchup,
		scOverlap, string(row.Overlap), scJitter, row.Jitter.Milliseconds(), scPaused, paused,
		scSource, string(row.Source), scHash, row.SpecHash, scNext, unixMS(row.NextFireAt),
		scVersion, row.Version, scCreated, unixMS(row.CreatedAt), scUpdated, unixMS(row.UpdatedAt)}
}

// ScheduleUpsert creates or replaces a schedule (store.Upserted), read and
// written again if another write came between.
func (s *Store) ScheduleUpsert(ctx context.Context, p *store.ScheduleUpsertParams) (*store.ScheduleUpsertResult, error) {
	for range scheduleTries {
		old, err := s.ScheduleGet(ctx, &store.ScheduleGetParams{Name: p.Spec.Name})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		row, changed, err := store.Upserted(old, p)
		if err != nil {
			return nil, err
		}
		res := &store.ScheduleUpsertResult{Schedule: row, Created: old == nil, Changed: changed}
		if !changed {
			return res, nil
		}
		var want int64
		if old != nil {
			want = old.Version
		}
		err = s.put(ctx, p.Spec.Name, want, specFields(row)...)
		if !errors.Is(err, store.ErrConflict) {
			return res, err
		}
	}
	return nil, fmt.Errorf("upsert schedule %q: written concurrently %d times", p.Spec.Name, scheduleTries)
}

// ScheduleSetPaused pauses or resumes a schedule.
func (s *Store) ScheduleSetPaused(ctx context.Context, p *store.ScheduleSetPausedParams) (*store.Schedule, error) {
	for range scheduleTries {
		old, err := s.ScheduleGet(ctx, &store.ScheduleGetParams{Name: p.Name})
		if err != nil {
			return nil, err
		}
		row := old.WithPaused(p.Paused, p.Now)
		fields := []any{scPaused, "0", scVersion, row.Version, scUpdated, unixMS(row.UpdatedAt)}
		if p.Paused {
			fields[1] = "1"
		} else {
			fields = append(fields, scNext, unixMS(row.NextFireAt))
		}
		err = s.put(ctx, p.Name, old.Version, fields...)
		if !errors.Is(err, store.ErrConflict) {
			return row, err
		}
	}
	return nil, fmt.Errorf("pause schedule %q: written concurrently %d times", p.Name, scheduleTries)
}

// ScheduleDelete deletes a schedule, leaving its jobs.
func (s *Store) ScheduleDelete(ctx context.Context, p *store.ScheduleDeleteParams) error {
	_, err := s.run(ctx, "scheddel", p.Name, string(p.Source))
	return err
}
