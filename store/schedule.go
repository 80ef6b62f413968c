package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Catchup says which slots missed during downtime fire when the schedule
// is next looked at.
type Catchup string

const (
	CatchupNone   Catchup = "none"   // only the slots on time
	CatchupLatest Catchup = "latest" // and the newest missed slot inside the window
	CatchupAll    Catchup = "all"    // and up to MaxCatchup missed slots inside the window
)

// Overlap says whether a slot fires while the last fire's job is unfinished.
type Overlap string

const (
	OverlapAllow Overlap = "allow"
	OverlapSkip  Overlap = "skip"
)

// ScheduleSource is who owns a schedule: the API, or the --schedules file
// (read-only over the API).
type ScheduleSource string

const (
	SourceAPI  ScheduleSource = "api"
	SourceFile ScheduleSource = "file"
)

// Defaults and bounds of a schedule spec.
const (
	// DefaultCatchupWindow drops missed slots older than a day: a report
	// of last week is rarely worth running after a long outage.
	DefaultCatchupWindow = 24 * time.Hour
	// DefaultMaxCatchup bounds what "all" fires after downtime.
	DefaultMaxCatchup = 100
	// MinEvery and MaxEvery bound every_ms: at most one slot per second
	// (the scheduler ticks once a second), at least one a year.
	MinEvery = time.Second
	MaxEvery = 365 * 24 * time.Hour
	// ScheduleBatch is how many due schedules one ScheduleListDue returns.
	ScheduleBatch = 100
)

// ScheduleJob is the job a schedule enqueues at each slot.
type ScheduleJob struct {
	Queue       string
	Kind        string
	Payload     json.RawMessage // nil: none
	Priority    int
	MaxAttempts int
	Timeout     time.Duration
	Backoff     Backoff
	Tags        []string
	Metadata    json.RawMessage
	// ConcurrencyKey counts each fired job toward its queue's per-key
	// limits; nil: none.
	ConcurrencyKey *string
}

// ScheduleSpec is what an admin (or the schedules file) defines. Exactly
// one of Cron and Every is set.
type ScheduleSpec struct {
	Name          string
	Cron          string
	Every         time.Duration
	Timezone      string // IANA name, for Cron; "" is UTC
	Job           ScheduleJob
	Catchup       Catchup
	CatchupWindow time.Duration
	MaxCatchup    int
	Overlap       Overlap
	Jitter        time.Duration
	Paused        bool
}

// Schedule is a spec with its firing state, as the store keeps it.
type Schedule struct {
	ScheduleSpec
	Source ScheduleSource
	// SpecHash is Hash of the spec last written.
	SpecHash     string
	NextFireAt   time.Time
	LastFireAt   *time.Time // the slot of the last job fired
	LastJobID    *string
	FiresTotal   int64
	SkippedTotal int64
	MissedTotal  int64
	// Version counts the writes of the spec and of paused: a fire is a
	// compare-and-set on it and on NextFireAt.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Normalize fills the defaults of s in place.
func (s *ScheduleSpec) Normalize() {
	if s.Timezone == "" {
		s.Timezone = "UTC"
	}
	if s.Catchup == "" {
		s.Catchup = CatchupLatest
	}
	if s.CatchupWindow == 0 {
		s.CatchupWindow = DefaultCatchupWindow
	}
	if s.MaxCatchup == 0 {
		s.MaxCatchup = DefaultMaxCatchup
	}
	if s.Overlap == "" {
		s.Overlap = OverlapAllow
	}
	j := &s.Job
	spec := JobSpec{Queue: j.Queue, MaxAttempts: j.MaxAttempts, Timeout: j.Timeout, Backoff: j.Backoff,
		Tags: j.Tags, Metadata: j.Metadata}
	spec.Normalize(time.Time{})
	j.Queue, j.MaxAttempts, j.Timeout, j.Backoff = spec.Queue, spec.MaxAttempts, spec.Timeout, spec.Backoff
	j.Tags, j.Metadata = spec.Tags, spec.Metadata
}

// Hash identifies the spec's content (name included): a replica finding
// the same hash in the store has nothing to write.
func (s *ScheduleSpec) Hash() string {
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// Next returns the first slot strictly after t, or the zero time for a
// spec that never fires again (or does not parse: specs are checked when
// written, so a stored one always does).
func (s *ScheduleSpec) Next(t time.Time) time.Time {
	if s.Every > 0 {
		every := s.Every.Milliseconds()
		ms := t.UnixMilli()
		return time.UnixMilli((ms/every + 1) * every).UTC()
	}
	c, err := ParseCron(s.Cron, s.Timezone)
	if err != nil {
		return time.Time{}
	}
	return Trunc(c.Next(t))
}

// Check reports the first thing wrong with a normalized spec that its
// field ranges do not already say: an expression that does not parse or
// never fires, an unknown zone, neither or both of cron and every. Returns
// a *FieldError.
func (s *ScheduleSpec) Check() error {
	switch {
	case s.Cron == "" && s.Every == 0:
		return &FieldError{Field: "cron", Reason: "one of cron and every_ms is required"}
	case s.Cron != "" && s.Every != 0:
		return &FieldError{Field: "every_ms", Reason: "must not be given with cron"}
	case s.Every != 0 && (s.Every < MinEvery || s.Every > MaxEvery):
		return &FieldError{Field: "every_ms", Reason: "must be 1000..31536000000"}
	case s.Every != 0:
		if s.Timezone != "" && s.Timezone != "UTC" {
			_, err := LoadZone(s.Timezone)
			return err
		}
		return nil
	}
	_, err := ParseCron(s.Cron, s.Timezone)
	return err
}

// JobSpec is the job the schedule enqueues for slot, to run at runAt.
func (s *ScheduleSpec) JobSpec(slot, runAt time.Time) JobSpec {
	j := s.Job
	name, at := s.Name, Trunc(slot)
	return JobSpec{
		Queue: j.Queue, Kind: j.Kind, Payload: j.Payload, Priority: j.Priority, RunAt: runAt,
		MaxAttempts: j.MaxAttempts, Timeout: j.Timeout, Backoff: j.Backoff, Tags: j.Tags, Metadata: j.Metadata,
		ConcurrencyKey: j.ConcurrencyKey, Schedule: &name, ScheduledFor: &at,
	}
}

type ScheduleDeleteParams struct {
	Name   string
	Source ScheduleSource // "": any
}

type ScheduleFireParams struct {
	Name       string
	NextFireAt time.Time // expected
	Version    int64     // expected
	Jobs       []JobSpec // from Schedule.Jobs, oldest slot first
	Missed     int64
	Next       time.Time // the new next_fire_at
	Now        time.Time
}

type ScheduleFireResult struct {
	Won     bool
	Jobs    []*Job // inserted
	Skipped int64  // jobs left out by overlap skip
}

type ScheduleGetParams struct {
	Name string
}

type ScheduleListParams struct{}

type ScheduleListDueParams struct {
	Limit int // 0: ScheduleBatch
	Now   time.Time
}

type ScheduleSetPausedParams struct {
	Name   string
	Paused bool
	Now    time.Time
}

type ScheduleTriggerParams struct {
	Name string
	Now  time.Time
}

type ScheduleUpsertParams struct {
	Spec      ScheduleSpec // normalized and checked
	Source    ScheduleSource
	IfChanged bool
	Now       time.Time
}

type ScheduleUpsertResult struct {
	Schedule *Schedule
	Created  bool
	Changed  bool // false: IfChanged found the same spec
}
