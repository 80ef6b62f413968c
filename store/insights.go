package store

import (
	"context"
	"time"
)

// Insights are the reads the dashboard needs beyond Store: lists that only
// an operator looks at, each bounded and served from indexes or maintained
// counters, so that a page stays fast however many jobs the store holds.
// A backend implements it beside Store; store/storetest.RunInsights is its
// contract. Methods are listed alphabetically.
//
// List methods that page take an opaque Cursor (empty: the first page) and
// return a JobPage. A page may hold fewer than Limit jobs, or none, while
// NextCursor is set: a backend may bound the rows one call examines, so a
// caller that wants every match follows NextCursor until it is empty. With
// MaxBytes a page also ends at the first job that brings its JobBytes to
// MaxBytes (see Budget), NextCursor then set after that job.
type Insights interface {
	// JobListDead lists dead jobs matching the filter, most recently
	// finished first. Every backend serves Kind, or else Queue, from an
	// index, so with one of them (or none) and no Reason a page is empty
	// only when nothing is left, however many dead jobs other kinds have;
	// Reason, and Queue beside a Kind, may be applied within a bounded
	// window of entries.
	JobListDead(ctx context.Context, p *JobListDeadParams) (*JobPage, error)
	// JobListHeldBySilent lists running jobs whose owner's last sign of life
	// is before SilentSince (suspect or dead workers whose jobs await
	// recovery), longest silent owner first, owners in LiveIDs aside.
	JobListHeldBySilent(ctx context.Context, p *JobListHeldBySilentParams) ([]HeldJob, error)
	// JobListRetrying lists scheduled jobs with attempt > 0 (waiting out a
	// retry backoff), soonest run_at first.
	JobListRetrying(ctx context.Context, p *JobListRetryingParams) (*JobPage, error)
	// JobSearch lists jobs newest first (by id) matching every filter given:
	// an id prefix, a queue, a kind, a state (the stored state, as JobList
	// filters it). Returns no jobs for an IDPrefix that no job id can start
	// with.
	JobSearch(ctx context.Context, p *JobSearchParams) (*JobPage, error)
	// QueueDepthList lists the depth samples QueueDepthRoll kept for a
	// queue, oldest first: only the minutes sampled (a minute no scheduler
	// ran is missing, not zero). An unknown queue has none.
	QueueDepthList(ctx context.Context, p *QueueDepthListParams) ([]QueueDepth, error)
	// QueueMinuteList lists what QueueMinuteRoll kept for a queue, oldest
	// minute first, kinds by name within a minute: only the minutes in
	// which a job of the queue finished.
	QueueMinuteList(ctx context.Context, p *QueueMinuteListParams) ([]KindMinute, error)
	// RescueCount counts the rescues finished at or after Since by the
	// node that made them (recovered_by), among the newest
	// MaxRescuesCounted: a bounded read, whatever the history holds. Rescues
	// of jobs since pruned may be left out.
	RescueCount(ctx context.Context, p *RescueCountParams) (map[string]int64, error)
	// RescueList lists rescues (attempts closed as orphaned) finished at or
	// after Since, newest first.
	RescueList(ctx context.Context, p *RescueListParams) ([]Rescue, error)
	// ThroughputList counts closed attempts per minute, one entry for every
	// minute from From (truncated to the minute) up to To (exclusive),
	// oldest first, zeros included. Each attempt counts once, in the minute
	// it closed: succeeded as Succeeded, failed and timed_out as Failed,
	// orphaned as Rescued; released and cancelled attempts do not count. At
	// most MaxThroughputMinutes entries; minutes older than the store keeps
	// (at least ThroughputRetention) read as zeros.
	ThroughputList(ctx context.Context, p *ThroughputListParams) ([]ThroughputMinute, error)
}

// Bounds of the Insights lists.
const (
	// DefaultInsightsLimit is the page size when a Limit is 0.
	DefaultInsightsLimit = 50
	// MaxThroughputMinutes bounds one ThroughputList call: a day.
	MaxThroughputMinutes = 24 * 60
	// ThroughputRetention is how long per-minute counts are kept at least.
	ThroughputRetention = 24 * time.Hour
	// MaxRescuesCounted bounds RescueCount: the newest rescues it counts.
	MaxRescuesCounted = 10_000
)

// JobPage is one page of a job list.
type JobPage struct {
	Jobs []*Job
	// NextCursor continues the list; empty when no later page can match.
	NextCursor string
}

type JobListDeadParams struct {
	Queue    string     // "": any
	Kind     string     // "": any
	Reason   DeadReason // "": any
	Limit    int        // 0: DefaultInsightsLimit
	Cursor   string
	MaxBytes int // the page's byte budget; 0: none
}

type JobListHeldBySilentParams struct {
	// SilentSince: owners last heard from strictly before it are listed.
	SilentSince time.Time
	// LiveIDs are owners known to be live (server nodes).
	LiveIDs []string
	Limit   int // 0: DefaultInsightsLimit
}

// HeldJob is a running job with its owner's last sign of life.
type HeldJob struct {
	Job                  *Job
	OwnerLastHeartbeatAt time.Time
}

type JobListRetryingParams struct {
	Queue    string // "": any
	Limit    int    // 0: DefaultInsightsLimit
	Cursor   string
	MaxBytes int // the page's byte budget; 0: none
}

type JobSearchParams struct {
	IDPrefix string // case-insensitive
	Queue    string
	Kind     string
	State    State
	Limit    int // 0: DefaultInsightsLimit
	Cursor   string
	MaxBytes int // the page's byte budget; 0: none
}

type RescueCountParams struct {
	Since time.Time // zero: any
}

type RescueListParams struct {
	Since time.Time // zero: any
	Limit int       // 0: DefaultInsightsLimit
}

// Rescue is one recovery of a job from a dead worker, read from the
// orphaned attempt it closed.
type Rescue struct {
	JobID   string
	Attempt int
	// Queue, Kind and State describe the job as it is now.
	Queue string
	Kind  string
	State State
	// WorkerID is the dead owner; LastHeartbeatAt its last sign of life.
	WorkerID        string
	LastHeartbeatAt time.Time
	StartedAt       time.Time // when that delivery was leased
	RescuedAt       time.Time
	RecoveredBy     string // the server node that won the rescue
}

// RecoveryLatency is how long the job waited for its rescue after its owner
// fell silent: the rescue time minus the owner's last sign of life.
func (r Rescue) RecoveryLatency() time.Duration { return r.RescuedAt.Sub(r.LastHeartbeatAt) }

type ThroughputListParams struct {
	From time.Time
	To   time.Time
}

// ThroughputMinute is what closed in one minute.
type ThroughputMinute struct {
	Minute    time.Time // the start of the minute, UTC
	Succeeded int64
	Failed    int64 // failed or timed out
	Rescued   int64
}
