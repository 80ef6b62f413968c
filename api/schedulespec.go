package api

import (
	"encoding/json"
	"time"

	"github.com/tetherq/tether/store"
)

// Ranges of a schedule spec beyond those of a job's fields.
const (
	maxWindowMS     = 31_536_000_000 // catchup_window_ms: a year
	maxMaxCatchup   = store.MaxBatch
	maxJitterMS     = 86_400_000 // a day
	maxPreviewCount = 100
	// previewName is the one name a schedule cannot have: its GET would
	// reach the preview route.
	previewName = "preview"
)

// scheduleRequest is a schedule spec on the wire (PUT /v1/schedules/{name}
// and each entry of a schedules file, which also names it).
type scheduleRequest struct {
	Name            *string         `json:"name"`
	Cron            *string         `json:"cron"`
	EveryMS         *int64          `json:"every_ms"`
	Timezone        *string         `json:"timezone"`
	Job             json.RawMessage `json:"job"`
	Catchup         *string         `json:"catchup"`
	CatchupWindowMS *int64          `json:"catchup_window_ms"`
	MaxCatchup      *int            `json:"max_catchup"`
	Overlap         *string         `json:"overlap"`
	JitterMS        *int64          `json:"jitter_ms"`
	Paused          *bool           `json:"paused"`
}

// scheduleJobRequest is the job a schedule enqueues: a job spec without
// what belongs to one enqueue (run_at, delay_ms, unique_key, trace).
type scheduleJobRequest struct {
	Kind        *string         `json:"kind"`
	Queue       *string         `json:"queue"`
	Payload     json.RawMessage `json:"payload"`
	Priority    *int            `json:"priority"`
	MaxAttempts *int            `json:"max_attempts"`
	TimeoutMS   *int64          `json:"timeout_ms"`
	Backoff     json.RawMessage `json:"backoff"`
	Tags        []string        `json:"tags"`
	Metadata    json.RawMessage `json:"metadata"`
	// ConcurrencyKey is the fired jobs' concurrency_key.
	ConcurrencyKey *string `json:"concurrency_key"`
}

// decodeScheduleSpec decodes and checks a schedule spec; prefix
// ("schedules[2].") goes before every field an error names. name is the
// schedule's name from the path, "" when the spec must name itself (a
// file entry); a body naming another is refused. The spec is normalized.
func decodeScheduleSpec(data []byte, prefix, name string) (store.ScheduleSpec, error) {
	var req scheduleRequest
	if err := decodeStrict(data, &req, prefix); err != nil {
		return store.ScheduleSpec{}, err
	}
	switch {
	case name == "" && req.Name == nil:
		return store.ScheduleSpec{}, invalid(prefix+"name", "is required")
	case name == "":
		name = *req.Name
	case req.Name != nil && *req.Name != name:
		return store.ScheduleSpec{}, invalid(prefix+"name", "must be the name in the path")
	}
	if err := checkName(prefix+"name", name); err != nil {
		return store.ScheduleSpec{}, err
	}
	if name == previewName {
		return store.ScheduleSpec{}, invalid(prefix+"name", "must not be %q: GET /v1/schedules/preview is the preview route", previewName)
	}
	if err := req.check(prefix); err != nil {
		return store.ScheduleSpec{}, err
	}
	job, err := decodeScheduleJob(req.Job, prefix+"job.")
	if err != nil {
		return store.ScheduleSpec{}, err
	}
	s := store.ScheduleSpec{Name: name, Job: job}
	setIf(&s.Cron, req.Cron)
	setIf(&s.Timezone, req.Timezone)
	setIf(&s.MaxCatchup, req.MaxCatchup)
	setIf(&s.Paused, req.Paused)
	if req.EveryMS != nil {
		s.Every = millis(*req.EveryMS)
	}
	if req.Catchup != nil {
		s.Catchup = store.Catchup(*req.Catchup)
	}
	if req.Overlap != nil {
		s.Overlap = store.Overlap(*req.Overlap)
	}
	if req.CatchupWindowMS != nil {
		s.CatchupWindow = millis(*req.CatchupWindowMS)
	}
	if req.JitterMS != nil {
		s.Jitter = millis(*req.JitterMS)
	}
	s.Normalize()
	if err := s.Check(); err != nil {
		if fe, ok := store.AsFieldError(err); ok {
			return store.ScheduleSpec{}, invalid(prefix+fe.Field, "%s", fe.Reason)
		}
		return store.ScheduleSpec{}, err
	}
	return s, nil
}

// check validates the fields' ranges; the expression, the zone and the
// choice of cron or every_ms are store.ScheduleSpec.Check's.
func (req *scheduleRequest) check(p string) error {
	return firstErr(
		when(req.Cron == nil && req.EveryMS == nil, p+"cron", "one of cron and every_ms is required"),
		when(req.Cron != nil && req.EveryMS != nil, p+"every_ms", "must not be given with cron"),
		checkRange(p+"every_ms", req.EveryMS, store.MinEvery.Milliseconds(), store.MaxEvery.Milliseconds()),
		checkOptional(req.Timezone, func(v string) error { return checkLen(p+"timezone", v, 1, 64) }),
		when(len(req.Job) == 0 || isNull(req.Job), p+"job", "is required"),
		checkOptional(req.Catchup, func(v string) error {
			return when(v != "none" && v != "latest" && v != "all", p+"catchup", "must be one of none, latest, all")
		}),
		checkRange(p+"catchup_window_ms", req.CatchupWindowMS, 1, maxWindowMS),
		checkRange(p+"max_catchup", req.MaxCatchup, 1, maxMaxCatchup),
		checkOptional(req.Overlap, func(v string) error {
			return when(v != "allow" && v != "skip", p+"overlap", "must be one of allow, skip")
		}),
		checkRange(p+"jitter_ms", req.JitterMS, 0, maxJitterMS),
	)
}

// decodeScheduleJob decodes a schedule's job template with the checks of
// a job spec, every error naming "job.<field>".
func decodeScheduleJob(data []byte, prefix string) (store.ScheduleJob, error) {
	var req scheduleJobRequest
	if err := decodeStrict(data, &req, prefix); err != nil {
		return store.ScheduleJob{}, err
	}
	var bo backoffRequest
	if len(req.Backoff) > 0 && !isNull(req.Backoff) {
		if err := decodeStrict(req.Backoff, &bo, prefix+"backoff."); err != nil {
			return store.ScheduleJob{}, err
		}
	}
	spec := specRequest{Kind: req.Kind, Queue: req.Queue, Payload: req.Payload, Priority: req.Priority,
		MaxAttempts: req.MaxAttempts, TimeoutMS: req.TimeoutMS, Tags: req.Tags, Metadata: req.Metadata,
		ConcurrencyKey: req.ConcurrencyKey}
	if err := spec.check(bo, prefix); err != nil {
		return store.ScheduleJob{}, err
	}
	s := spec.spec(bo, time.Time{})
	return store.ScheduleJob{Queue: s.Queue, Kind: s.Kind, Payload: s.Payload, Priority: s.Priority,
		MaxAttempts: s.MaxAttempts, Timeout: s.Timeout, Backoff: s.Backoff, Tags: s.Tags, Metadata: s.Metadata,
		ConcurrencyKey: s.ConcurrencyKey}, nil
}
