package web

import (
	"errors"
	"net/url"
	"strconv"

	"github.com/a-h/templ"

	"github.com/tetherq/tether/store"
)

// schedulesPanel is the table of schedules: each in words, its zone, next
// and last fire (with the last job's state), policies and whether paused.
type schedulesPanel struct {
	Heading   string
	Schedules []scheduleRow
	Back      string
	Base      string
}

type scheduleRow struct {
	Name, Words, Expr, Timezone string
	Next, LastFire              instant
	LastJobID, LastJobState     string // "" when none, or the job is gone
	Catchup, Overlap            string
	Paused, FromFile            bool
	Fires, Skipped, Missed      int64
}

func (d *dash) schedulesPanel(rq *request) (templ.Component, error) {
	list, err := d.store.ScheduleList(rq.ctx, &store.ScheduleListParams{})
	if err != nil {
		return nil, err
	}
	m := schedulesPanel{Heading: rq.heading("Schedules"), Back: rq.back, Base: rq.base}
	for _, s := range list {
		row, err := d.newScheduleRow(rq, s)
		if err != nil {
			return nil, err
		}
		m.Schedules = append(m.Schedules, row)
	}
	return schedulesView(m), nil
}

// newScheduleRow reads the state of the schedule's last job (one point
// read per schedule).
func (d *dash) newScheduleRow(rq *request, s *store.Schedule) (scheduleRow, error) {
	row := scheduleRow{Name: s.Name, Words: scheduleWords(&s.ScheduleSpec), Expr: scheduleExpr(s),
		Timezone: s.Timezone, Next: instantAt(s.NextFireAt, rq.now), LastFire: instantOf(s.LastFireAt, rq.now),
		Catchup: string(s.Catchup), Overlap: string(s.Overlap), Paused: s.Paused,
		FromFile: s.Source == store.SourceFile, Fires: s.FiresTotal, Skipped: s.SkippedTotal, Missed: s.MissedTotal}
	if s.Every > 0 {
		row.Timezone = "—" // every_ms ignores zones
	}
	if s.LastJobID == nil {
		return row, nil
	}
	j, err := d.store.JobGet(rq.ctx, &store.JobGetParams{ID: *s.LastJobID, Now: rq.now})
	switch {
	case errors.Is(err, store.ErrNotFound): // pruned or deleted
	case err != nil:
		return row, err
	default:
		row.LastJobID, row.LastJobState = j.ID, string(j.StateAt(rq.now))
	}
	return row, nil
}

// scheduleExpr is the schedule as written: its cron expression or its
// interval in milliseconds.
func scheduleExpr(s *store.Schedule) string {
	if s.Cron != "" {
		return s.Cron
	}
	return "every_ms " + strconv.FormatInt(s.Every.Milliseconds(), 10)
}

func schedulePath(name string) string { return "/schedules/" + url.PathEscape(name) }

// putScheduleCommand is a curl line that creates a schedule on this server.
func putScheduleCommand(base string) string {
	return "curl -X PUT " + base + `/v1/schedules/nightly-report -H 'Content-Type: application/json' \
  -d '{"cron":"0 2 * * *","timezone":"UTC","job":{"kind":"build_report"}}'`
}
