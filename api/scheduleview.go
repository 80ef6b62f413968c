package api

import (
	"encoding/json"

	"github.com/tetherq/tether/store"
)

// scheduleView is a schedule on the wire, as API.md defines it.
type scheduleView struct {
	Name            string          `json:"name"`
	Cron            *string         `json:"cron"`
	EveryMS         *int64          `json:"every_ms"`
	Timezone        string          `json:"timezone"`
	Job             scheduleJobView `json:"job"`
	Catchup         store.Catchup   `json:"catchup"`
	CatchupWindowMS int64           `json:"catchup_window_ms"`
	MaxCatchup      int             `json:"max_catchup"`
	Overlap         store.Overlap   `json:"overlap"`
	JitterMS        int64           `json:"jitter_ms"`
	Paused          bool            `json:"paused"`
	Source          string          `json:"source"`
	NextFireAt      stamp           `json:"next_fire_at"`
	LastFireAt      *stamp          `json:"last_fire_at"`
	LastJobID       *string         `json:"last_job_id"`
	FiresTotal      int64           `json:"fires_total"`
	SkippedTotal    int64           `json:"skipped_total"`
	MissedTotal     int64           `json:"missed_total"`
	Version         int64           `json:"version"`
	CreatedAt       stamp           `json:"created_at"`
	UpdatedAt       stamp           `json:"updated_at"`
}

// scheduleJobView is a schedule's job template, every default filled in.
type scheduleJobView struct {
	Kind        string          `json:"kind"`
	Queue       string          `json:"queue"`
	Payload     json.RawMessage `json:"payload"`
	Priority    int             `json:"priority"`
	MaxAttempts int             `json:"max_attempts"`
	TimeoutMS   int64           `json:"timeout_ms"`
	Backoff     backoffView     `json:"backoff"`
	Tags        []string        `json:"tags"`
	Metadata    json.RawMessage `json:"metadata"`
	// ConcurrencyKey is the fired jobs' concurrency_key, or null.
	ConcurrencyKey *string `json:"concurrency_key"`
}

type schedulesView struct {
	Schedules []*scheduleView `json:"schedules"`
}

type previewView struct {
	Times []stamp `json:"times"`
}

func viewSchedule(s *store.Schedule) *scheduleView {
	j := s.Job
	v := &scheduleView{
		Name: s.Name, Timezone: s.Timezone,
		Job: scheduleJobView{Kind: j.Kind, Queue: j.Queue, Payload: orNull(j.Payload), Priority: j.Priority,
			MaxAttempts: j.MaxAttempts, TimeoutMS: j.Timeout.Milliseconds(),
			Backoff: backoffView{BaseMS: j.Backoff.Base.Milliseconds(), MaxMS: j.Backoff.Max.Milliseconds()},
			Tags:    j.Tags, Metadata: j.Metadata, ConcurrencyKey: j.ConcurrencyKey},
		Catchup: s.Catchup, CatchupWindowMS: s.CatchupWindow.Milliseconds(), MaxCatchup: s.MaxCatchup,
		Overlap: s.Overlap, JitterMS: s.Jitter.Milliseconds(), Paused: s.Paused, Source: string(s.Source),
		NextFireAt: stamp(s.NextFireAt), LastFireAt: stampOf(s.LastFireAt), LastJobID: s.LastJobID,
		FiresTotal: s.FiresTotal, SkippedTotal: s.SkippedTotal, MissedTotal: s.MissedTotal,
		Version: s.Version, CreatedAt: stamp(s.CreatedAt), UpdatedAt: stamp(s.UpdatedAt),
	}
	if s.Cron != "" {
		v.Cron = &s.Cron
	} else {
		ms := s.Every.Milliseconds()
		v.EveryMS = &ms
	}
	if v.Job.Tags == nil {
		v.Job.Tags = []string{}
	}
	if len(v.Job.Metadata) == 0 {
		v.Job.Metadata = json.RawMessage("{}")
	}
	return v
}
