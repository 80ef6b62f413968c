package web

import (
	"errors"
	"time"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// Sizes of the schedule page's lists.
const (
	scheduleNextFires  = 10
	scheduleRecentJobs = 20
)

// schedulePanel is one schedule: its spec, its next fire times and its
// recent jobs, with the admin's buttons.
type schedulePanel struct {
	scheduleRow
	Kind, Queue      string
	Window, Jitter   string
	MaxCatchup       int
	Version          int64
	Created, Updated instant
	NextFires        []fireTime
	Jobs             []scheduleJobRow
	Payload          string
	Back             string
}

// fireTime is a fire instant with its wall time in the schedule's zone,
// where DST shows ("Sun 2026-03-08 03:00:00 EDT").
type fireTime struct {
	instant
	Local string
}

type scheduleJobRow struct {
	ID, State string
	Slot, Run instant
}

func (d *dash) schedulePanel(rq *request) (templ.Component, error) {
	s, err := d.store.ScheduleGet(rq.ctx, &store.ScheduleGetParams{Name: param(rq.r, "name")})
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	row, err := d.newScheduleRow(rq, s)
	if err != nil {
		return nil, err
	}
	m := schedulePanel{scheduleRow: row, Kind: s.Job.Kind, Queue: s.Job.Queue,
		Window: span(s.CatchupWindow), Jitter: span(s.Jitter), MaxCatchup: s.MaxCatchup, Version: s.Version,
		Created: instantAt(s.CreatedAt, rq.now), Updated: instantAt(s.UpdatedAt, rq.now),
		Payload: pretty(s.Job.Payload), Back: rq.back}
	// The next fires from next_fire_at on: what the scheduler fires next
	// unless the schedule is paused (resume recomputes from then).
	loc, err := store.LoadZone(s.Timezone)
	if err != nil || s.Every > 0 {
		loc = time.UTC
	}
	for at := s.NextFireAt; !at.IsZero() && len(m.NextFires) < scheduleNextFires; at = s.Next(at) {
		m.NextFires = append(m.NextFires, fireTime{instantAt(at, rq.now), at.In(loc).Format("Mon 2006-01-02 15:04:05 MST")})
	}
	jobs, err := d.store.JobList(rq.ctx, &store.JobListParams{Schedule: s.Name, Limit: scheduleRecentJobs,
		MaxBytes: store.DefaultPageBytes, Now: rq.now})
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		m.Jobs = append(m.Jobs, scheduleJobRow{ID: j.ID, State: string(j.StateAt(rq.now)),
			Slot: instantOf(j.ScheduledFor, rq.now), Run: instantAt(j.RunAt, rq.now)})
	}
	return scheduleView(m), nil
}
