package storetest_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/storetest"
)

// TestMemory runs the suite against mem, a reference store of maps behind
// one mutex. It keeps the suite honest: every test can pass, so a failure
// against a real backend is the backend's.
func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return newMem() })
}

func TestClock(t *testing.T) {
	c := storetest.NewClock(storetest.Base)
	if !c.Now().Equal(storetest.Base) {
		t.Errorf("Now = %s, want Base", c.Now())
	}
	if got := c.Advance(time.Minute); !got.Equal(storetest.Base.Add(time.Minute)) || !c.Now().Equal(got) {
		t.Errorf("Advance(1m) = %s, Now = %s", got, c.Now())
	}
}

type mem struct {
	mu      sync.Mutex
	hub     *store.Hub
	jobs    map[string]*memJob
	workers map[string]*memWorker
	nodes   map[string]*store.Node
	paused  map[string]bool
	keys    map[string]memKey
}

type memJob struct {
	store.Job
	ackToken string // the token that settled it as succeeded
}

type memWorker struct {
	store.Worker
	taken []string // jobs taken since its last heartbeat
}

type memKey struct {
	hash, jobID string
	expires     time.Time
}

var _ store.Store = (*mem)(nil)

func newMem() *mem {
	return &mem{
		hub: store.NewHub(), jobs: map[string]*memJob{}, workers: map[string]*memWorker{},
		nodes: map[string]*store.Node{}, paused: map[string]bool{}, keys: map[string]memKey{},
	}
}

func (m *mem) Close() error                           { return nil }
func (m *mem) Now(context.Context) (time.Time, error) { return store.Trunc(time.Now()), nil }
func (m *mem) Ping(context.Context) error             { return nil }

func (m *mem) LeaseWakeup([]string) <-chan struct{} { return m.hub.Wait() }

func clone(j *memJob) *store.Job {
	c := j.Job
	c.Tags = slices.Clone(j.Tags)
	c.Attempts = slices.Clone(j.Attempts)
	if j.Lease != nil {
		l := *j.Lease
		c.Lease = &l
	}
	return &c
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (m *mem) JobEnqueue(_ context.Context, p *store.JobEnqueueParams) (*store.JobEnqueueResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := store.Trunc(p.Now)
	if k, ok := m.keys[p.IdempotencyKey]; ok && p.IdempotencyKey != "" && now.Before(k.expires) {
		if k.hash != p.RequestHash {
			return nil, store.ErrConflict
		}
		j := &store.Job{ID: k.jobID}
		if mj, ok := m.jobs[k.jobID]; ok {
			j = clone(mj)
		}
		return &store.JobEnqueueResult{Jobs: []*store.Job{j}, Existing: []bool{true}, Replayed: true}, nil
	}
	res := &store.JobEnqueueResult{}
	for _, sp := range p.Jobs {
		sp.Normalize(now)
		if j := m.unique(sp.Queue, sp.UniqueKey); j != nil {
			res.Jobs, res.Existing = append(res.Jobs, clone(j)), append(res.Existing, true)
			continue
		}
		j := &memJob{Job: store.Job{
			ID: uuid.Must(uuid.NewV7()).String(), Queue: sp.Queue, Kind: sp.Kind, Payload: sp.Payload,
			Priority: sp.Priority, State: store.StateAvailable, MaxAttempts: sp.MaxAttempts,
			Timeout: sp.Timeout, Backoff: sp.Backoff, RunAt: sp.RunAt, CreatedAt: now,
			UniqueKey: sp.UniqueKey, Tags: sp.Tags, Metadata: sp.Metadata,
		}}
		if j.RunAt.After(now) {
			j.State = store.StateScheduled
		} else {
			m.hub.Signal()
		}
		m.jobs[j.ID] = j
		res.Jobs, res.Existing = append(res.Jobs, clone(j)), append(res.Existing, false)
	}
	if p.IdempotencyKey != "" && len(res.Jobs) > 0 {
		m.keys[p.IdempotencyKey] = memKey{p.RequestHash, res.Jobs[0].ID, now.Add(store.IdempotencyTTL)}
	}
	return res, nil
}

func (m *mem) unique(queue string, key *string) *memJob {
	if key == nil {
		return nil
	}
	for _, j := range m.jobs {
		if j.Queue == queue && j.UniqueKey != nil && *j.UniqueKey == *key && !j.State.Finished() {
			return j
		}
	}
	return nil
}

func (m *mem) JobGet(_ context.Context, p *store.JobGetParams) (*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[p.ID]
	if !ok {
		return nil, store.ErrNotFound
	}
	return clone(j), nil
}

func (m *mem) JobLease(_ context.Context, p *store.JobLeaseParams) ([]*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := store.Trunc(p.Now)
	m.touch(p.WorkerID, now)
	var cands []*memJob
	for _, j := range m.jobs {
		if j.State == store.StateAvailable && slices.Contains(p.Queues, j.Queue) && !m.paused[j.Queue] &&
			(len(p.Kinds) == 0 || slices.Contains(p.Kinds, j.Kind)) {
			cands = append(cands, j)
		}
	}
	slices.SortFunc(cands, func(a, b *memJob) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.RunAt.Compare(b.RunAt), cmp.Compare(a.ID, b.ID))
	})
	out := []*store.Job{}
	for _, j := range cands[:min(len(cands), p.Max)] {
		j.State, j.Attempt, j.StartedAt = store.StateRunning, j.Attempt+1, &now
		j.Lease = &store.Lease{WorkerID: p.WorkerID, Token: newToken(), ExpiresAt: now.Add(j.Timeout)}
		j.Attempts = append(j.Attempts, store.Attempt{
			ID: uuid.Must(uuid.NewV7()).String(), JobID: j.ID, Attempt: j.Attempt,
			WorkerID: p.WorkerID, StartedAt: now, Outcome: store.OutcomeRunning,
		})
		out = append(out, clone(j))
	}
	return out, nil
}

// touch records a sign of life, registering an unknown worker.
func (m *mem) touch(id string, now time.Time) *memWorker {
	w, ok := m.workers[id]
	if !ok {
		w = &memWorker{Worker: store.Worker{ID: id, StartedAt: now, Labels: map[string]string{}}}
		m.workers[id] = w
	}
	w.LastHeartbeatAt = now
	return w
}

// held returns a running job if token is its lease.
func (m *mem) held(id, token string) (*memJob, error) {
	j, ok := m.jobs[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	if j.State != store.StateRunning || j.Lease == nil || j.Lease.Token != token {
		return nil, store.ErrLeaseLost
	}
	return j, nil
}

// end closes the open attempt and applies the failure decision.
func (m *mem) end(j *memJob, p store.DecideParams, edit func(*store.Attempt)) {
	now := store.Trunc(p.Now)
	p.Attempt, p.MaxAttempts, p.Rescues = j.Attempt, j.MaxAttempts, j.Rescues
	p.CancelRequested, p.Backoff = j.CancelRequested, j.Backoff
	d := store.Decide(p)
	a := &j.Attempts[len(j.Attempts)-1]
	a.Outcome, a.FinishedAt = d.Outcome, &now
	if edit != nil {
		edit(a)
	}
	j.State, j.Attempt, j.Rescues, j.DeadReason, j.Lease = d.State, d.Attempt, d.Rescues, d.DeadReason, nil
	switch {
	case d.State.Finished():
		j.FinishedAt = &now
	case d.State == store.StateAvailable:
		j.RunAt = store.Trunc(d.RunAt)
		m.hub.Signal()
	default:
		j.RunAt = store.Trunc(d.RunAt)
	}
}

func (m *mem) JobAck(_ context.Context, p *store.JobAckParams) (*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ack(p)
}

func (m *mem) ack(p *store.JobAckParams) (*store.Job, error) {
	now := store.Trunc(p.Now)
	j, err := m.held(p.ID, p.Token)
	if err == store.ErrLeaseLost && j == nil {
		if sj := m.jobs[p.ID]; sj.State == store.StateSucceeded && sj.ackToken == p.Token {
			return clone(sj), nil
		}
	}
	if err != nil {
		return nil, err
	}
	a := &j.Attempts[len(j.Attempts)-1]
	a.Outcome, a.FinishedAt = store.OutcomeSucceeded, &now
	j.State, j.Result, j.FinishedAt, j.Lease, j.ackToken = store.StateSucceeded, p.Result, &now, nil, p.Token
	return clone(j), nil
}

func (m *mem) JobFail(_ context.Context, p *store.JobFailParams) (*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fail(p)
}

func (m *mem) fail(p *store.JobFailParams) (*store.Job, error) {
	j, err := m.held(p.ID, p.Token)
	if err != nil {
		return nil, err
	}
	ending := store.EndFail
	if p.NoRetry {
		ending = store.EndFailPermanent
	}
	msg := p.Error
	j.LastError = &msg
	m.end(j, store.DecideParams{Ending: ending, RetryIn: p.RetryIn, Now: p.Now}, func(a *store.Attempt) { a.Error = &msg })
	return clone(j), nil
}

func (m *mem) JobSettle(_ context.Context, p *store.JobSettleParams) ([]error, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, a := range p.Acks {
		a.Now = p.Now
		_, err := m.ack(&a)
		errs = append(errs, err)
	}
	for _, f := range p.Fails {
		f.Now = p.Now
		_, err := m.fail(&f)
		errs = append(errs, err)
	}
	return errs, nil
}

func (m *mem) JobExtend(_ context.Context, p *store.JobExtendParams) (*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.held(p.ID, p.Token)
	if err != nil {
		return nil, err
	}
	now := store.Trunc(p.Now)
	d := cmp.Or(p.Extend, j.Timeout)
	j.Lease = &store.Lease{WorkerID: j.Lease.WorkerID, Token: j.Lease.Token, ExpiresAt: now.Add(d)}
	if p.Progress != nil {
		j.Progress = p.Progress
	}
	m.touch(j.Lease.WorkerID, now)
	return clone(j), nil
}

func (m *mem) JobRelease(_ context.Context, p *store.JobReleaseParams) (*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.held(p.ID, p.Token)
	if err != nil {
		return nil, err
	}
	m.end(j, store.DecideParams{Ending: store.EndRelease, RetryIn: &p.Delay, Now: p.Now}, nil)
	return clone(j), nil
}

func (m *mem) JobCancel(_ context.Context, p *store.JobCancelParams) (*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[p.ID]
	if !ok {
		return nil, store.ErrNotFound
	}
	now := store.Trunc(p.Now)
	switch j.State {
	case store.StateScheduled, store.StateAvailable:
		j.State, j.FinishedAt = store.StateCancelled, &now
	case store.StateRunning:
		j.CancelRequested = true
	default:
		return nil, store.ErrInvalidState
	}
	return clone(j), nil
}

func (m *mem) JobDelete(_ context.Context, p *store.JobDeleteParams) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[p.ID]
	switch {
	case !ok:
		return store.ErrNotFound
	case j.State == store.StateRunning:
		return store.ErrInvalidState
	}
	delete(m.jobs, p.ID)
	return nil
}

func (m *mem) JobRetry(_ context.Context, p *store.JobRetryParams) (*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[p.ID]
	if !ok {
		return nil, store.ErrNotFound
	}
	if j.State != store.StateDead && j.State != store.StateCancelled {
		return nil, store.ErrInvalidState
	}
	j.State, j.Attempt, j.Rescues, j.DeadReason = store.StateAvailable, 0, 0, nil
	j.RunAt, j.FinishedAt, j.CancelRequested = store.Trunc(p.Now), nil, false
	if p.Payload != nil {
		j.Payload = p.Payload
	}
	m.hub.Signal()
	return clone(j), nil
}

func (m *mem) JobRun(_ context.Context, p *store.JobRunParams) (*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[p.ID]
	if !ok {
		return nil, store.ErrNotFound
	}
	if j.State != store.StateScheduled {
		return nil, store.ErrInvalidState
	}
	j.State, j.RunAt = store.StateAvailable, store.Trunc(p.Now)
	m.hub.Signal()
	return clone(j), nil
}

// sorted returns the jobs matching keep, ordered by less.
func (m *mem) sorted(keep func(*memJob) bool, cmpf func(a, b *memJob) int) []*memJob {
	var out []*memJob
	for _, j := range m.jobs {
		if keep(j) {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, cmpf)
	return out
}

func (m *mem) JobList(_ context.Context, p *store.JobListParams) ([]*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.sorted(func(j *memJob) bool {
		return (p.Queue == "" || j.Queue == p.Queue) && (p.State == "" || j.State == p.State) &&
			(p.Kind == "" || j.Kind == p.Kind) && (p.Cursor == "" || j.ID < p.Cursor)
	}, func(a, b *memJob) int { return cmp.Compare(b.ID, a.ID) })
	var out []*store.Job
	for _, j := range list[:min(len(list), p.Limit)] {
		out = append(out, clone(j))
	}
	return out, nil
}

func (m *mem) JobListOrphans(_ context.Context, p *store.JobListOrphansParams) ([]store.Orphan, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Orphan
	for _, j := range m.sorted(func(j *memJob) bool { return j.State == store.StateRunning }, func(a, b *memJob) int { return cmp.Compare(a.ID, b.ID) }) {
		owner := j.Lease.WorkerID
		var last time.Time
		if w, ok := m.workers[owner]; ok {
			last = w.LastHeartbeatAt
		}
		if slices.Contains(p.LiveIDs, owner) || !last.Before(p.DeadBefore) || len(out) == p.Limit {
			continue
		}
		out = append(out, store.Orphan{JobID: j.ID, WorkerID: owner, Token: j.Lease.Token, LastHeartbeatAt: last})
	}
	return out, nil
}

func (m *mem) JobPromote(_ context.Context, p *store.JobPromoteParams) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	due := m.sorted(func(j *memJob) bool { return j.State == store.StateScheduled && !j.RunAt.After(p.Now) },
		func(a, b *memJob) int { return a.RunAt.Compare(b.RunAt) })
	due = due[:min(len(due), p.Limit)]
	for _, j := range due {
		j.State = store.StateAvailable
	}
	if len(due) > 0 {
		m.hub.Signal()
	}
	return len(due), nil
}

func (m *mem) JobPrune(_ context.Context, p *store.JobPruneParams) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.keys {
		if !p.Now.Before(v.expires) {
			delete(m.keys, k)
		}
	}
	old := m.sorted(func(j *memJob) bool {
		switch j.State {
		case store.StateSucceeded, store.StateCancelled:
			return j.FinishedAt.Before(p.SucceededBefore)
		case store.StateDead:
			return j.FinishedAt.Before(p.DeadBefore)
		}
		return false
	}, func(a, b *memJob) int { return a.FinishedAt.Compare(*b.FinishedAt) })
	old = old[:min(len(old), p.Limit)]
	for _, j := range old {
		delete(m.jobs, j.ID)
	}
	return len(old), nil
}

func (m *mem) JobReap(_ context.Context, p *store.JobReapParams) ([]*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	expired := m.sorted(func(j *memJob) bool { return j.State == store.StateRunning && j.Lease.ExpiresAt.Before(p.Now) },
		func(a, b *memJob) int { return a.Lease.ExpiresAt.Compare(b.Lease.ExpiresAt) })
	var out []*store.Job
	for _, j := range expired[:min(len(expired), p.Limit)] {
		m.take(j.Lease.WorkerID, j.ID)
		m.end(j, store.DecideParams{Ending: store.EndTimedOut, Now: p.Now}, nil)
		out = append(out, clone(j))
	}
	return out, nil
}

func (m *mem) JobRecover(_ context.Context, p *store.JobRecoverParams) ([]*store.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*store.Job
	for _, o := range p.Orphans {
		j, ok := m.jobs[o.JobID]
		if !ok || j.State != store.StateRunning || j.Lease.WorkerID != o.WorkerID || j.Lease.Token != o.Token {
			continue
		}
		m.take(o.WorkerID, j.ID)
		m.end(j, store.DecideParams{Ending: store.EndOrphaned, MaxRescues: p.MaxRescues, Now: p.Now}, func(a *store.Attempt) {
			node, last := p.NodeID, o.LastHeartbeatAt
			a.RecoveredBy = &node
			if !last.IsZero() {
				a.LastHeartbeatAt = &last
			}
		})
		out = append(out, clone(j))
	}
	return out, nil
}

// take records that a job was taken from a worker, for its next heartbeat.
func (m *mem) take(worker, id string) {
	if w, ok := m.workers[worker]; ok {
		w.taken = append(w.taken, id)
	}
}
