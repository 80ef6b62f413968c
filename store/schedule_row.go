package store

import (
	"encoding/json"
	"time"
)

// The rules of a schedule's writes, computed here once for every backend:
// a backend reads the row, calls these, and writes what they return.

// Upserted returns the row ScheduleUpsert writes over old (nil: none) and
// whether it writes at all. Returns ErrInvalidState for an API write over
// a file schedule.
func Upserted(old *Schedule, p *ScheduleUpsertParams) (row *Schedule, changed bool, err error) {
	now := Trunc(p.Now)
	hash := p.Spec.Hash()
	if old != nil {
		if p.Source == SourceAPI && old.Source == SourceFile {
			return nil, false, ErrInvalidState
		}
		if p.IfChanged && old.Source == p.Source && old.SpecHash == hash {
			return old, false, nil
		}
	}
	row = &Schedule{ScheduleSpec: p.Spec, Source: p.Source, SpecHash: hash, NextFireAt: p.Spec.Next(now),
		Version: 1, CreatedAt: now, UpdatedAt: now}
	if old != nil {
		row.LastFireAt, row.LastJobID = old.LastFireAt, old.LastJobID
		row.FiresTotal, row.SkippedTotal, row.MissedTotal = old.FiresTotal, old.SkippedTotal, old.MissedTotal
		row.Version, row.CreatedAt = old.Version+1, old.CreatedAt
	}
	return row, true, nil
}

// WithPaused returns s paused or resumed at now: version + 1, and on
// resume next_fire_at recomputed from now.
func (s *Schedule) WithPaused(paused bool, now time.Time) *Schedule {
	c := *s
	c.Paused, c.Version, c.UpdatedAt = paused, s.Version+1, Trunc(now)
	if !paused {
		c.NextFireAt = c.Next(Trunc(now))
	}
	return &c
}

// scheduleJobJSON is how a job template is stored: the API's field names.
type scheduleJobJSON struct {
	Queue       string          `json:"queue"`
	Kind        string          `json:"kind"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Priority    int             `json:"priority"`
	MaxAttempts int             `json:"max_attempts"`
	TimeoutMS   int64           `json:"timeout_ms"`
	BaseMS      int64           `json:"backoff_base_ms"`
	MaxMS       int64           `json:"backoff_max_ms"`
	Tags        []string        `json:"tags"`
	Metadata    json.RawMessage `json:"metadata"`
	// ConcurrencyKey is left out when nil, so templates stored before it
	// hash (ScheduleSpec.Hash) as they did.
	ConcurrencyKey *string `json:"concurrency_key,omitempty"`
}

// MarshalJSON writes the template as backends store it.
func (j ScheduleJob) MarshalJSON() ([]byte, error) {
	return json.Marshal(scheduleJobJSON{
		Queue: j.Queue, Kind: j.Kind, Payload: j.Payload, Priority: j.Priority, MaxAttempts: j.MaxAttempts,
		TimeoutMS: j.Timeout.Milliseconds(), BaseMS: j.Backoff.Base.Milliseconds(),
		MaxMS: j.Backoff.Max.Milliseconds(), Tags: j.Tags, Metadata: j.Metadata, ConcurrencyKey: j.ConcurrencyKey,
	})
}

// UnmarshalJSON reads a template MarshalJSON wrote.
func (j *ScheduleJob) UnmarshalJSON(b []byte) error {
	var w scheduleJobJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*j = ScheduleJob{
		Queue: w.Queue, Kind: w.Kind, Payload: w.Payload, Priority: w.Priority, MaxAttempts: w.MaxAttempts,
		Timeout: time.Duration(w.TimeoutMS) * time.Millisecond,
		Backoff: Backoff{Base: time.Duration(w.BaseMS) * time.Millisecond, Max: time.Duration(w.MaxMS) * time.Millisecond},
		Tags:    w.Tags, Metadata: w.Metadata, ConcurrencyKey: w.ConcurrencyKey,
	}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	return nil
}
