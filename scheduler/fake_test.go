package scheduler

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/tetherq/tether/store"
)

// fakeStore implements the part of store.Store the scheduler calls; any
// other method panics through the nil embedded interface. The real-store
// tests in sqlite_test.go check the behaviour end to end.
type fakeStore struct {
	store.Store

	mu         sync.Mutex
	nodes      map[string]*store.Node
	running    []store.Orphan // running jobs; LastHeartbeatAt is the owner's
	missCAS    bool           // JobRecover wins nothing: its compare-and-set keeps missing
	expired    int            // leases JobReap will end
	due        int            // scheduled jobs JobPromote will move
	finished   int            // jobs JobPrune will delete
	clock      time.Time      // what Now answers
	fail       map[string]error
	calls      []string
	orphanArgs []store.JobListOrphansParams
	pruneArgs  []store.JobPruneParams
}

func newFakeStore() *fakeStore {
	return &fakeStore{nodes: map[string]*store.Node{}, fail: map[string]error{}}
}

// call records the method and returns the error set for it, if any.
func (f *fakeStore) call(name string) error {
	f.calls = append(f.calls, name)
	return f.fail[name]
}

func (f *fakeStore) NodeHeartbeat(_ context.Context, p *store.NodeHeartbeatParams) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("NodeHeartbeat"); err != nil {
		return err
	}
	f.nodes[p.ID] = &store.Node{ID: p.ID, Version: p.Version, StartedAt: p.StartedAt, LastHeartbeatAt: p.Now}
	return nil
}

func (f *fakeStore) NodeStop(_ context.Context, p *store.NodeStopParams) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("NodeStop"); err != nil {
		return err
	}
	if n := f.nodes[p.ID]; n != nil {
		at := p.Now
		n.StoppedAt = &at
	}
	return nil
}

func (f *fakeStore) NodeList(context.Context, *store.NodeListParams) ([]*store.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("NodeList"); err != nil {
		return nil, err
	}
	var out []*store.Node
	for _, n := range f.nodes {
		c := *n
		out = append(out, &c)
	}
	return out, nil
}

func (f *fakeStore) JobListOrphans(_ context.Context, p *store.JobListOrphansParams) ([]store.Orphan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("JobListOrphans"); err != nil {
		return nil, err
	}
	f.orphanArgs = append(f.orphanArgs, *p)
	var out []store.Orphan
	for _, o := range f.running {
		if len(out) < p.Limit && !o.LastHeartbeatAt.After(p.DeadBefore) && !slices.Contains(p.LiveIDs, o.WorkerID) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (f *fakeStore) JobRecover(_ context.Context, p *store.JobRecoverParams) ([]*store.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("JobRecover"); err != nil {
		return nil, err
	}
	if f.missCAS {
		return nil, nil
	}
	// The compare-and-set: same job, owner and token. One pass over the
	// running jobs, so that a tick of 50,000 rescues stays quick.
	take := make(map[store.Orphan]bool, len(p.Orphans))
	for _, o := range p.Orphans {
		take[o] = true
	}
	var won []*store.Job
	kept := f.running[:0]
	for _, o := range f.running {
		if take[o] {
			won = append(won, &store.Job{ID: o.JobID, State: store.StateAvailable, Rescues: 1})
			continue
		}
		kept = append(kept, o)
	}
	f.running = kept
	return won, nil
}

func (f *fakeStore) JobReap(_ context.Context, p *store.JobReapParams) ([]*store.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("JobReap"); err != nil {
		return nil, err
	}
	n := min(p.Limit, f.expired)
	f.expired -= n
	return make([]*store.Job, n), nil
}

func (f *fakeStore) JobPromote(_ context.Context, p *store.JobPromoteParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("JobPromote"); err != nil {
		return 0, err
	}
	n := min(p.Limit, f.due)
	f.due -= n
	return n, nil
}

func (f *fakeStore) ScheduleListDue(context.Context, *store.ScheduleListDueParams) ([]*store.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return nil, f.call("ScheduleListDue")
}

func (f *fakeStore) KeyPrune(context.Context, *store.KeyPruneParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 0, f.call("KeyPrune")
}

func (f *fakeStore) WorkerPrune(context.Context, *store.WorkerPruneParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 0, f.call("WorkerPrune")
}

func (f *fakeStore) NodePrune(context.Context, *store.NodePruneParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 0, f.call("NodePrune")
}

func (f *fakeStore) CountFold(context.Context, *store.CountFoldParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 0, f.call("CountFold")
}

func (f *fakeStore) ThroughputRoll(context.Context, *store.ThroughputRollParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 0, f.call("ThroughputRoll")
}

func (f *fakeStore) QueueList(context.Context, *store.QueueListParams) ([]*store.Queue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return nil, f.call("QueueList")
}

func (f *fakeStore) QueueDepthRoll(context.Context, *store.QueueDepthRollParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 0, f.call("QueueDepthRoll")
}

func (f *fakeStore) QueueMinuteRoll(context.Context, *store.QueueMinuteRollParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 0, f.call("QueueMinuteRoll")
}

func (f *fakeStore) JobPrune(_ context.Context, p *store.JobPruneParams) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("JobPrune"); err != nil {
		return 0, err
	}
	f.pruneArgs = append(f.pruneArgs, *p)
	n := min(p.Limit, f.finished)
	f.finished -= n
	return n, nil
}

func (f *fakeStore) Now(context.Context) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Now"); err != nil {
		return time.Time{}, err
	}
	return f.clock, nil
}

// count returns how many times method was called.
func (f *fakeStore) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == method {
			n++
		}
	}
	return n
}
