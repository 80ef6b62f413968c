package api

import (
	"encoding/json"
	"time"

	"github.com/tetherq/tether/store"
)

// timeLayout is RFC 3339 in UTC with exactly millisecond precision.
const timeLayout = store.TimeLayout

// stamp is a time on the wire.
type stamp time.Time

func (s stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(s).UTC().Format(timeLayout) + `"`), nil
}

// stampOf returns nil for a nil time, so the field reads null.
func stampOf(t *time.Time) *stamp {
	if t == nil {
		return nil
	}
	s := stamp(*t)
	return &s
}

// jobView is a job on the wire, as API.md defines it.
type jobView struct {
	ID              string          `json:"id"`
	Queue           string          `json:"queue"`
	Kind            string          `json:"kind"`
	Payload         json.RawMessage `json:"payload"`
	Priority        int             `json:"priority"`
	State           store.State     `json:"state"`
	Attempt         int             `json:"attempt"`
	MaxAttempts     int             `json:"max_attempts"`
	TimeoutMS       int64           `json:"timeout_ms"`
	Backoff         backoffView     `json:"backoff"`
	RunAt           stamp           `json:"run_at"`
	CreatedAt       stamp           `json:"created_at"`
	StartedAt       *stamp          `json:"started_at"`
	FinishedAt      *stamp          `json:"finished_at"`
	UniqueKey       *string         `json:"unique_key"`
	Tags            []string        `json:"tags"`
	Metadata        json.RawMessage `json:"metadata"`
	LastError       *string         `json:"last_error"`
	Result          json.RawMessage `json:"result"`
	Progress        *int            `json:"progress"`
	CancelRequested bool            `json:"cancel_requested"`
	Rescues         int             `json:"rescues"`
	DeadReason      *string         `json:"dead_reason"`
	Lease           *leaseView      `json:"lease"`
	Trace           *traceView      `json:"trace"`
	ConcurrencyKey  *string         `json:"concurrency_key"`
	Schedule        *string         `json:"schedule"`
	ScheduledFor    *stamp          `json:"scheduled_for"`
}

// jobDetailView is a job with its attempts, oldest first (GET /v1/jobs/{id}).
type jobDetailView struct {
	*jobView
	Attempts []attemptView `json:"attempts"`
}

type backoffView struct {
	BaseMS int64 `json:"base_ms"`
	MaxMS  int64 `json:"max_ms"`
}

// leaseView is a running job's lease. Token, the holder's proof, is set
// only in the answer to the lease that took the delivery: any other reader
// (another worker's token reads every job) could settle the job with it.
// traceView is a job's W3C trace context, as the producer gave it.
type traceView struct {
	Parent string `json:"traceparent"`
	State  string `json:"tracestate,omitempty"`
}

type leaseView struct {
	WorkerID  string `json:"worker_id"`
	Token     string `json:"token,omitempty"`
	ExpiresAt stamp  `json:"expires_at"`
}

type attemptView struct {
	ID              string  `json:"id"`
	Attempt         int     `json:"attempt"`
	WorkerID        string  `json:"worker_id"`
	StartedAt       stamp   `json:"started_at"`
	FinishedAt      *stamp  `json:"finished_at"`
	Outcome         string  `json:"outcome"`
	Error           *string `json:"error"`
	RecoveredBy     *string `json:"recovered_by"`
	LastHeartbeatAt *stamp  `json:"last_heartbeat_at"`
}

// jobRef is what remains of a job an idempotent replay names after the
// job itself was pruned: its id.
type jobRef struct {
	ID string `json:"id"`
}

// viewJob renders j as seen at now: a scheduled job that is due reads as
// available, and its lease has no token. A job the store knows only by id
// renders as a jobRef.
func viewJob(j *store.Job, now time.Time) any {
	if j.State == "" {
		return jobRef{ID: j.ID}
	}
	return newJobView(j, now)
}

func newJobView(j *store.Job, now time.Time) *jobView {
	v := &jobView{
		ID: j.ID, Queue: j.Queue, Kind: j.Kind, Payload: orNull(j.Payload),
		Priority: j.Priority, State: j.StateAt(now), Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
		TimeoutMS: j.Timeout.Milliseconds(),
		Backoff:   backoffView{BaseMS: j.Backoff.Base.Milliseconds(), MaxMS: j.Backoff.Max.Milliseconds()},
		RunAt:     stamp(j.RunAt), CreatedAt: stamp(j.CreatedAt),
		StartedAt: stampOf(j.StartedAt), FinishedAt: stampOf(j.FinishedAt),
		UniqueKey: j.UniqueKey, Tags: j.Tags, Metadata: j.Metadata,
		LastError: j.LastError, Result: orNull(j.Result), Progress: j.Progress,
		CancelRequested: j.CancelRequested, Rescues: j.Rescues, ConcurrencyKey: j.ConcurrencyKey,
		Schedule: j.Schedule, ScheduledFor: stampOf(j.ScheduledFor),
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if len(v.Metadata) == 0 {
		v.Metadata = json.RawMessage("{}")
	}
	if j.DeadReason != nil {
		r := string(*j.DeadReason)
		v.DeadReason = &r
	}
	if l := j.Lease; l != nil {
		v.Lease = &leaseView{WorkerID: l.WorkerID, ExpiresAt: stamp(l.ExpiresAt)}
	}
	if t := j.Trace; t != nil {
		v.Trace = &traceView{Parent: t.Parent, State: t.State}
	}
	return v
}

// newLeasedJobView renders j for the worker that has just leased it: the
// only view whose lease carries the token.
func newLeasedJobView(j *store.Job, now time.Time) *jobView {
	v := newJobView(j, now)
	if v.Lease != nil {
		v.Lease.Token = j.Lease.Token
	}
	return v
}

// viewJobDetail renders j with its attempt history, always a list.
func viewJobDetail(j *store.Job, now time.Time) *jobDetailView {
	v := &jobDetailView{jobView: newJobView(j, now), Attempts: make([]attemptView, 0, len(j.Attempts))}
	for _, a := range j.Attempts {
		v.Attempts = append(v.Attempts, attemptView{
			ID: a.ID, Attempt: a.Attempt, WorkerID: a.WorkerID,
			StartedAt: stamp(a.StartedAt), FinishedAt: stampOf(a.FinishedAt),
			Outcome: string(a.Outcome), Error: a.Error,
			RecoveredBy: a.RecoveredBy, LastHeartbeatAt: stampOf(a.LastHeartbeatAt),
		})
	}
	return v
}

// viewJobs renders a list, never null.
func viewJobs(jobs []*store.Job, now time.Time) []any {
	out := make([]any, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, viewJob(j, now))
	}
	return out
}

// orNull keeps a JSON value, or gives nil (null on the wire) for none.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

// workerView is a worker on the wire; state is its liveness at the read.
type workerView struct {
	ID              string            `json:"id"`
	State           store.WorkerState `json:"state"`
	LastHeartbeatAt stamp             `json:"last_heartbeat_at"`
	Queues          []string          `json:"queues"`
	Labels          map[string]string `json:"labels"`
	InFlight        []string          `json:"in_flight"`
	StartedAt       stamp             `json:"started_at"`
}

// workerState is w's liveness at now.
func (a *API) workerState(w *store.Worker, now time.Time) store.WorkerState {
	return store.WorkerStateAt(w.LastHeartbeatAt, now, a.cfg.HeartbeatInterval, a.cfg.DeadAfter)
}

func (a *API) viewWorker(w *store.Worker, now time.Time) workerView {
	return workerView{
		ID:              w.ID,
		State:           a.workerState(w, now),
		LastHeartbeatAt: stamp(w.LastHeartbeatAt),
		Queues:          orEmpty(w.Queues),
		Labels:          orEmptyMap(w.Labels),
		InFlight:        orEmpty(w.InFlight),
		StartedAt:       stamp(w.StartedAt),
	}
}

type nodeView struct {
	ID              string          `json:"id"`
	State           store.NodeState `json:"state"`
	LastHeartbeatAt stamp           `json:"last_heartbeat_at"`
	StartedAt       stamp           `json:"started_at"`
	StoppedAt       *stamp          `json:"stopped_at"`
	Version         string          `json:"version"`
}

// viewNode renders n as seen at now: live, or gone once stopped or silent
// for deadAfter.
func viewNode(n *store.Node, now time.Time, deadAfter time.Duration) nodeView {
	return nodeView{ID: n.ID, State: n.StateAt(now, deadAfter), LastHeartbeatAt: stamp(n.LastHeartbeatAt),
		StartedAt: stamp(n.StartedAt), StoppedAt: stampOf(n.StoppedAt), Version: n.Version}
}

// queueView is a queue's counts; the six state counts sum to its jobs.
type queueView struct {
	Name      string `json:"name"`
	Paused    bool   `json:"paused"`
	Available int64  `json:"available"`
	Scheduled int64  `json:"scheduled"`
	Running   int64  `json:"running"`
	Succeeded int64  `json:"succeeded"`
	Dead      int64  `json:"dead"`
	Cancelled int64  `json:"cancelled"`
	Retrying  int64  `json:"retrying"`
	// OldestAvailableAgeMS is 0 when no job is available.
	OldestAvailableAgeMS int64       `json:"oldest_available_age_ms"`
	Limits               *limitsView `json:"limits"`
}

func viewQueue(q *store.Queue, now time.Time) queueView {
	v := queueView{
		Name: q.Name, Paused: q.Paused,
		Available: q.Counts[store.StateAvailable], Scheduled: q.Counts[store.StateScheduled],
		Running: q.Counts[store.StateRunning], Succeeded: q.Counts[store.StateSucceeded],
		Dead: q.Counts[store.StateDead], Cancelled: q.Counts[store.StateCancelled],
		Retrying: q.Retrying, Limits: viewLimits(q.Limits),
	}
	if q.OldestAvailableAt != nil {
		v.OldestAvailableAgeMS = max(0, now.Sub(*q.OldestAvailableAt).Milliseconds())
	}
	return v
}

type statsView struct {
	Jobs         map[store.State]int64       `json:"jobs"`
	Workers      map[store.WorkerState]int64 `json:"workers"`
	RescuesTotal int64                       `json:"rescues_total"`
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
