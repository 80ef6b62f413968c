package store

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// Store is the storage contract every backend implements and
// store/storetest checks. Methods are listed alphabetically; each takes a
// params struct so a new field never breaks a signature, and each mutating
// method is one atomic transition.
type Store interface {
	// Close releases the store's resources.
	Close() error

	// CountFold folds the queue count deltas that writes left behind into
	// the counts QueueList and StatsGet read, and returns how many deltas it
	// folded. A backend that counts on the write path has none to fold (0,
	// nil). Replicas may call it at once; it never double counts.
	CountFold(ctx context.Context, p *CountFoldParams) (int, error)

	// JobAck settles a running job as succeeded. Returns ErrNotFound if the
	// job does not exist and ErrLeaseLost if the token is not its current
	// lease. An ack repeated under the token that settled it returns the job.
	JobAck(ctx context.Context, p *JobAckParams) (*Job, error)
	// JobCancel cancels a scheduled or available job at once, and requests
	// cancellation of a running one. Returns ErrNotFound, or ErrInvalidState
	// if the job is finished.
	JobCancel(ctx context.Context, p *JobCancelParams) (*Job, error)
	// JobDelete removes a job that is not running. Returns ErrNotFound, or
	// ErrInvalidState if it is running.
	JobDelete(ctx context.Context, p *JobDeleteParams) error
	// JobEnqueue inserts jobs in one transaction, in order. A job whose
	// unique_key matches an unfinished job of its queue yields that job
	// instead. Returns ErrConflict if the idempotency key was used with
	// another request hash.
	JobEnqueue(ctx context.Context, p *JobEnqueueParams) (*JobEnqueueResult, error)
	// JobExtend pushes a running job's expiry to now + Extend (or its
	// timeout) and records progress. Returns ErrNotFound or ErrLeaseLost.
	JobExtend(ctx context.Context, p *JobExtendParams) (*Job, error)
	// JobFail ends a delivery as failed and applies the failure decisions.
	// Returns ErrNotFound or ErrLeaseLost.
	JobFail(ctx context.Context, p *JobFailParams) (*Job, error)
	// JobGet returns a job with its attempts, the newest MaxAttemptsShown
	// of them, oldest first. Returns ErrNotFound.
	JobGet(ctx context.Context, p *JobGetParams) (*Job, error)
	// JobLease moves up to Max available jobs of the queues to running for
	// the worker, which it registers or heartbeats. Returns no jobs (nil or
	// empty) when nothing is available.
	JobLease(ctx context.Context, p *JobLeaseParams) ([]*Job, error)
	// JobList lists jobs newest first, after the cursor. With MaxBytes the
	// page ends early at the first job that brings its JobBytes to MaxBytes
	// (see Budget); PageFull tells the caller it did.
	JobList(ctx context.Context, p *JobListParams) ([]*Job, error)
	// JobListOrphans lists running jobs whose owner's last sign of life is
	// at or before DeadBefore, owners in LiveIDs aside.
	JobListOrphans(ctx context.Context, p *JobListOrphansParams) ([]Orphan, error)
	// JobPromote makes up to Limit due scheduled jobs available and returns
	// how many it moved.
	JobPromote(ctx context.Context, p *JobPromoteParams) (int, error)
	// JobPrune deletes up to Limit finished jobs past their retention, with
	// their attempts, oldest first; it returns how many jobs it deleted.
	JobPrune(ctx context.Context, p *JobPruneParams) (int, error)
	// JobReap ends up to Limit running jobs past their expiry as timed_out
	// and returns them after the decision.
	JobReap(ctx context.Context, p *JobReapParams) ([]*Job, error)
	// JobRecover rescues orphans, each with one compare-and-set on (id,
	// owner, token, running); it returns the jobs it won, after the
	// decision. An orphan another recoverer won is skipped, not an error.
	JobRecover(ctx context.Context, p *JobRecoverParams) ([]*Job, error)
	// JobRelease gives a running job back. Returns ErrNotFound or
	// ErrLeaseLost.
	JobRelease(ctx context.Context, p *JobReleaseParams) (*Job, error)
	// JobRetry puts a dead or cancelled job back to available with attempt
	// and rescues reset. Returns ErrNotFound or ErrInvalidState.
	JobRetry(ctx context.Context, p *JobRetryParams) (*Job, error)
	// JobRun makes a scheduled job available now. Returns ErrNotFound or
	// ErrInvalidState.
	JobRun(ctx context.Context, p *JobRunParams) (*Job, error)
	// JobSettle acks and fails many jobs in one transaction; one result per
	// item, acks first. Item errors are ErrLeaseLost or ErrNotFound.
	JobSettle(ctx context.Context, p *JobSettleParams) ([]error, error)

	// KeyPrune deletes up to Limit expired idempotency keys and webhook
	// delivery ids, and as many key rate states past their tat by
	// KeyRateSlack, and returns how many it deleted. A backend whose keys
	// expire by themselves has none (0, nil).
	KeyPrune(ctx context.Context, p *KeyPruneParams) (int, error)

	// LeaseWakeup registers a waiter whose channel closes when jobs may
	// have become leasable in one of the queues, on any replica sharing the
	// store: n jobs wake about n waiters of their queue, longest-waiting
	// first (see Wakeups). Take it before a lease attempt that may find
	// nothing, then wait on it, so no wake-up falls between the two; a
	// waiter not followed by another lease attempt must be Released.
	LeaseWakeup(queues []string) *Waiter

	// NodeHeartbeat registers or refreshes a server node; a node that had
	// stopped is live again.
	NodeHeartbeat(ctx context.Context, p *NodeHeartbeatParams) error
	// NodeList lists server nodes, most recently heard from first.
	NodeList(ctx context.Context, p *NodeListParams) ([]*Node, error)
	// NodePrune deletes up to Limit nodes last heard from before
	// SilentBefore, stopped or not, and returns how many it deleted.
	NodePrune(ctx context.Context, p *NodePruneParams) (int, error)
	// NodeStop records that a node shut down: it is gone at once. Stopping
	// an unknown node changes nothing.
	NodeStop(ctx context.Context, p *NodeStopParams) error

	// Now is the store's clock. SQLite's is the local clock.
	Now(ctx context.Context) (time.Time, error)
	// Ping checks that the store answers.
	Ping(ctx context.Context) error

	// QueueDepthRoll records each sampled queue's depth for the minute
	// holding Now, replacing what an earlier call recorded for that queue
	// and minute (replicas sample the same minute: the last one stands),
	// and drops up to DepthPruneBatch minutes older than DepthRetention. It
	// returns how many samples it wrote and minutes it dropped.
	QueueDepthRoll(ctx context.Context, p *QueueDepthRollParams) (int, error)
	// QueueMinuteRoll rolls up the jobs that finished (succeeded or dead)
	// in Minute, reading at most MaxRolledJobs, into one KindMinute per
	// queue and kind (store.RollMinute), replacing what an earlier roll of
	// that minute wrote: replicas rolling the same minute write the same.
	// It drops up to DepthPruneBatch rows older than DepthRetention, and
	// returns how many it wrote and dropped.
	QueueMinuteRoll(ctx context.Context, p *QueueMinuteRollParams) (int, error)
	// QueueList returns every queue that has jobs, was paused or has
	// limits, by name.
	QueueList(ctx context.Context, p *QueueListParams) ([]*Queue, error)
	// QueueSetLimits sets a queue's flow-control limits, creating it if
	// needed, or clears them (Limits nil or None). Every lease after it,
	// on any replica, holds to them; jobs running then count toward them,
	// and raising or clearing them wakes the queue's waiting leasers.
	QueueSetLimits(ctx context.Context, p *QueueSetLimitsParams) (*Queue, error)
	// QueueSetPaused pauses or resumes a queue, creating it if needed.
	QueueSetPaused(ctx context.Context, p *QueueSetPausedParams) (*Queue, error)

	// ScheduleDelete deletes a schedule; the jobs it enqueued stay. Returns
	// ErrNotFound, or ErrInvalidState when Source is set and the schedule's
	// is another.
	ScheduleDelete(ctx context.Context, p *ScheduleDeleteParams) error
	// ScheduleFire is one atomic transition: a compare-and-set on (Name,
	// NextFireAt, Version) that moves next_fire_at to Next, adds Missed to
	// missed_total, and inserts the Jobs through the same path as
	// JobEnqueue, except under overlap skip: while the last fire's job is
	// unfinished every job is skipped, otherwise the first is inserted and
	// the rest skipped (each then leaves one unfinished). A fire that lost
	// the compare-and-set changes nothing and returns Won false; a missing
	// schedule is lost too.
	ScheduleFire(ctx context.Context, p *ScheduleFireParams) (*ScheduleFireResult, error)
	// ScheduleGet returns a schedule. Returns ErrNotFound.
	ScheduleGet(ctx context.Context, p *ScheduleGetParams) (*Schedule, error)
	// ScheduleList returns every schedule, by name.
	ScheduleList(ctx context.Context, p *ScheduleListParams) ([]*Schedule, error)
	// ScheduleListDue returns up to Limit schedules not paused whose
	// next_fire_at is at or before Now, the earliest first.
	ScheduleListDue(ctx context.Context, p *ScheduleListDueParams) ([]*Schedule, error)
	// ScheduleSetPaused pauses or resumes a schedule (version + 1); resuming
	// recomputes next_fire_at from Now, so paused slots are not missed.
	// Returns ErrNotFound.
	ScheduleSetPaused(ctx context.Context, p *ScheduleSetPausedParams) (*Schedule, error)
	// ScheduleTrigger enqueues the schedule's job now, scheduled_for Now,
	// whatever its overlap policy, leaving next_fire_at as it is. Returns
	// ErrNotFound.
	ScheduleTrigger(ctx context.Context, p *ScheduleTriggerParams) (*Job, error)
	// ScheduleUpsert creates a schedule (version 1) or replaces its spec
	// (version + 1), next_fire_at computed from Now either way; counters,
	// last fire and created_at are kept. With IfChanged, a schedule of the
	// same Source whose spec hash is the spec's is left as it is. Returns
	// ErrInvalidState when Source is api and the schedule's is file.
	ScheduleUpsert(ctx context.Context, p *ScheduleUpsertParams) (*ScheduleUpsertResult, error)

	// StatsGet returns job counts by state and the rescue total: every
	// rescue ever made, not reduced by retries or pruning.
	StatsGet(ctx context.Context, p *StatsGetParams) (*Stats, error)

	// ThroughputRoll keeps the per-minute totals ThroughputList reads: it
	// rolls settled attempts up into them where a backend sums them apart
	// from the write path, and drops minutes older than ThroughputRetention.
	// It returns how many minutes it wrote or dropped. Replicas may call it
	// at once; it never double counts.
	ThroughputRoll(ctx context.Context, p *ThroughputRollParams) (int, error)

	// WorkerDeregister removes a worker and releases its jobs. Returns
	// ErrNotFound.
	WorkerDeregister(ctx context.Context, p *WorkerDeregisterParams) error
	// WorkerHeartbeat records a sign of life (registering an unknown
	// worker) and reports what the worker must stop working on.
	WorkerHeartbeat(ctx context.Context, p *WorkerHeartbeatParams) (*WorkerHeartbeatResult, error)
	// WorkerList lists workers heard from since SeenAfter, by id.
	WorkerList(ctx context.Context, p *WorkerListParams) ([]*Worker, error)
	// WorkerPrune deletes up to Limit workers last heard from before
	// SilentBefore that hold no running job, and returns how many it
	// deleted.
	WorkerPrune(ctx context.Context, p *WorkerPruneParams) (int, error)
	// WorkerRegister registers or refreshes a worker.
	WorkerRegister(ctx context.Context, p *WorkerRegisterParams) (*Worker, error)
}

type CountFoldParams struct{}

type JobAckParams struct {
	ID     string
	Token  string
	Result json.RawMessage
	Now    time.Time
}

type JobCancelParams struct {
	ID  string
	Now time.Time
}

type JobDeleteParams struct {
	ID string
}

type JobEnqueueParams struct {
	Jobs []JobSpec
	// IdempotencyKey, when set, makes a repeat with the same RequestHash
	// return the first call's job for IdempotencyTTL (default
	// store.IdempotencyTTL), even after that job was pruned. Webhook
	// deliveries use it too, with the hook's dedupe window.
	IdempotencyKey string
	// AlsoKeys are more names of the same request, for one known by more
	// than one (a GitHub delivery: its id, and its signed body). The first
	// of IdempotencyKey and AlsoKeys, in order, that has a live record
	// answers as IdempotencyKey alone would (replay, or ErrConflict); with
	// none, the new job is recorded under every one, in the same
	// transition. Ignored without IdempotencyKey.
	AlsoKeys       []string
	RequestHash    string
	IdempotencyTTL time.Duration
	Now            time.Time
}

// IdempotencyKeys returns IdempotencyKey and AlsoKeys in order, each once;
// nil without IdempotencyKey.
func (p *JobEnqueueParams) IdempotencyKeys() []string {
	if p.IdempotencyKey == "" {
		return nil
	}
	keys := make([]string, 0, 1+len(p.AlsoKeys))
	for _, k := range append([]string{p.IdempotencyKey}, p.AlsoKeys...) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

type JobEnqueueResult struct {
	Jobs []*Job
	// Existing[i] is true when Jobs[i] was not created by this call (a
	// unique_key match or an idempotent replay).
	Existing []bool
	// Replayed is true when the idempotency key matched an earlier call.
	Replayed bool
}

type JobExtendParams struct {
	ID       string
	Token    string
	Extend   time.Duration // 0: the job's timeout
	Progress *int
	Now      time.Time
}

type JobFailParams struct {
	ID      string
	Token   string
	Error   string
	NoRetry bool
	RetryIn *time.Duration
	Now     time.Time
}

type JobGetParams struct {
	ID  string
	Now time.Time
}

type JobLeaseParams struct {
	WorkerID string
	Queues   []string
	Kinds    []string // empty: any kind
	Max      int
	Now      time.Time
}

type JobListParams struct {
	Queue    string
	State    State
	Kind     string
	Schedule string // the schedule that fired the jobs; "" for any
	Limit    int
	Cursor   string // the id of the last job of the previous page
	MaxBytes int    // the page's byte budget; 0: none
	Now      time.Time
}

type JobListOrphansParams struct {
	DeadBefore time.Time
	LiveIDs    []string // owners known to be live (server nodes)
	Limit      int
}

type JobPromoteParams struct {
	Limit int
	Now   time.Time
}

type JobPruneParams struct {
	SucceededBefore time.Time // succeeded and cancelled
	DeadBefore      time.Time
	Limit           int
	Now             time.Time
}

type JobReapParams struct {
	Limit int
	Now   time.Time
}

type JobRecoverParams struct {
	Orphans    []Orphan
	NodeID     string // recorded as recovered_by
	MaxRescues int
	Now        time.Time
}

type JobReleaseParams struct {
	ID    string
	Token string
	Delay time.Duration
	Now   time.Time
}

type JobRetryParams struct {
	ID      string
	Payload json.RawMessage // nil: keep
	Now     time.Time
}

type JobRunParams struct {
	ID  string
	Now time.Time
}

type JobSettleParams struct {
	Acks  []JobAckParams
	Fails []JobFailParams
	// Now applies to every item; the items' own Now is ignored.
	Now time.Time
}

type NodeHeartbeatParams struct {
	ID        string
	Version   string
	StartedAt time.Time
	Now       time.Time
}

type KeyPruneParams struct {
	Limit int
	Now   time.Time
}

type NodeListParams struct{}

type NodePruneParams struct {
	SilentBefore time.Time
	Limit        int
}

type NodeStopParams struct {
	ID  string
	Now time.Time
}

type QueueListParams struct {
	Now time.Time
}

type QueueSetLimitsParams struct {
	Name   string
	Limits *Limits // nil: none
	Now    time.Time
}

type QueueSetPausedParams struct {
	Name   string
	Paused bool
	Now    time.Time
}

type StatsGetParams struct {
	Now time.Time
}

type ThroughputRollParams struct {
	Now time.Time
}

type WorkerDeregisterParams struct {
	ID  string
	Now time.Time
}

type WorkerHeartbeatParams struct {
	ID       string
	InFlight []string
	Now      time.Time
}

type WorkerHeartbeatResult struct {
	// Cancel lists held jobs with cancellation requested.
	Cancel []string
	// Lost lists jobs taken from the worker since its last heartbeat, each
	// once, plus in-flight jobs it does not hold.
	Lost []string
}

type WorkerListParams struct {
	SeenAfter time.Time // zero: all
}

type WorkerPruneParams struct {
	SilentBefore time.Time
	Limit        int
}

type WorkerRegisterParams struct {
	ID     string
	Queues []string
	Labels map[string]string
	Now    time.Time
}
