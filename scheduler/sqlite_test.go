package scheduler_test

// Black-box tests of the scheduler against a real SQLite file, with an
// injected clock: exactly-once recovery between racing nodes, self-liveness,
// promote, reap, prune, and logging only when a tick did work.

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tetherq/tether/scheduler"
	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/sqlite"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// node is one scheduler over the shared store, at an instant the test sets.
type node struct {
	s   *scheduler.Scheduler
	reg *prometheus.Registry
	log *lockedBuffer
	now time.Time
	mu  sync.Mutex
}

func (n *node) at(now time.Time) *node {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.now = now
	return n
}

func (n *node) clock() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.now
}

func (n *node) tick(t *testing.T, now time.Time) {
	t.Helper()
	n.at(now).s.Tick(t.Context())
}

// rescues reads the node's tether_rescues_total.
func (n *node) rescues(t *testing.T) int {
	t.Helper()
	return int(counter(t, n.reg, "tether_rescues_total"))
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

func setup(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newNode(t *testing.T, st store.Store, id string, cfg scheduler.Config) *node {
	t.Helper()
	n := &node{reg: prometheus.NewRegistry(), log: &lockedBuffer{}, now: t0}
	cfg.Store, cfg.NodeID, cfg.Now = st, id, n.clock
	cfg.Logger = slog.New(slog.NewTextHandler(n.log, nil))
	cfg.Registerer = n.reg
	s, err := scheduler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.s = s
	return n
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// enqueue puts n jobs of spec into the store at now and returns their ids.
func enqueue(t *testing.T, st store.Store, n int, spec store.JobSpec, now time.Time) []string {
	t.Helper()
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = spec
		if specs[i].Kind == "" {
			specs[i].Kind = "test"
		}
		specs[i].Normalize(now)
	}
	res, err := st.JobEnqueue(t.Context(), &store.JobEnqueueParams{Jobs: specs, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(res.Jobs))
	for i, j := range res.Jobs {
		ids[i] = j.ID
	}
	return ids
}

func lease(t *testing.T, st store.Store, worker, queue string, max int, now time.Time) []*store.Job {
	t.Helper()
	jobs, err := st.JobLease(t.Context(), &store.JobLeaseParams{WorkerID: worker, Queues: []string{queue}, Max: max, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func get(t *testing.T, st store.Store, id string, now time.Time) *store.Job {
	t.Helper()
	j, err := st.JobGet(t.Context(), &store.JobGetParams{ID: id, Now: now})
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return j
}

func TestRecoverExactlyOnceAcrossNodes(t *testing.T) {
	t.Parallel()
	st := setup(t)
	a := newNode(t, st, "node-a", scheduler.Config{})
	b := newNode(t, st, "node-b", scheduler.Config{})
	const rounds, perRound = 5, 60
	for round := range rounds {
		start := t0.Add(time.Duration(round) * time.Hour)
		queue := fmt.Sprintf("q%d", round)
		ids := enqueue(t, st, perRound, store.JobSpec{Queue: queue}, start)
		if got := lease(t, st, "w-doomed", queue, perRound, start); len(got) != perRound {
			t.Fatalf("leased %d, want %d", len(got), perRound)
		}
		// Both nodes tick at once, 16 s after the worker's lease.
		now := start.Add(16 * time.Second)
		var wg sync.WaitGroup
		for _, n := range []*node{a, b} {
			wg.Go(func() { n.tick(t, now) })
		}
		wg.Wait()

		for _, id := range ids {
			j := get(t, st, id, now)
			orphaned := 0
			for _, at := range j.Attempts {
				if at.Outcome == store.OutcomeOrphaned {
					orphaned++
					if at.RecoveredBy == nil || (*at.RecoveredBy != "node-a" && *at.RecoveredBy != "node-b") {
						t.Errorf("job %s recovered by %v", id, at.RecoveredBy)
					}
				}
			}
			if j.State != store.StateAvailable || j.Rescues != 1 || orphaned != 1 {
				t.Errorf("job %s: %s, rescues %d, %d orphaned attempts; want available, 1, 1", id, j.State, j.Rescues, orphaned)
			}
		}
	}
	t.Logf("node-a won %d rescues, node-b %d", a.rescues(t), b.rescues(t))
	if total := a.rescues(t) + b.rescues(t); total != rounds*perRound {
		t.Errorf("nodes rescued %d + %d jobs, want %d in all", a.rescues(t), b.rescues(t), rounds*perRound)
	}
}

func TestNodeNeverConsidersItselfDead(t *testing.T) {
	t.Parallel()
	st := setup(t)
	a := newNode(t, st, "node-a", scheduler.Config{})
	b := newNode(t, st, "node-b", scheduler.Config{})
	a.tick(t, t0)
	// A job held under the node's own id, as an in-process worker would.
	id := enqueue(t, st, 1, store.JobSpec{Queue: "self", Timeout: 24 * time.Hour}, t0)[0] // no reaping here
	lease(t, st, "node-a", "self", 1, t0)

	later := t0.Add(time.Hour) // long past DeadAfter for every row
	a.tick(t, later)
	if j := get(t, st, id, later); j.State != store.StateRunning {
		t.Fatalf("node-a recovered its own job: %s", j.State)
	}
	b.tick(t, later) // node-a heartbeat just now: live to node-b too
	if j := get(t, st, id, later); j.State != store.StateRunning {
		t.Fatalf("node-b recovered a live node's job: %s", j.State)
	}
	evenLater := later.Add(time.Hour) // node-a silent since: dead to node-b
	b.tick(t, evenLater)
	if j := get(t, st, id, evenLater); j.State != store.StateAvailable || j.Rescues != 1 {
		t.Errorf("node-b left a silent node's job %s, rescues %d", j.State, j.Rescues)
	}
}

func TestPromote(t *testing.T) {
	t.Parallel()
	st := setup(t)
	n := newNode(t, st, "node-a", scheduler.Config{})
	id := enqueue(t, st, 1, store.JobSpec{RunAt: t0.Add(10 * time.Second)}, t0)[0]
	n.tick(t, t0.Add(5*time.Second))
	if j := get(t, st, id, t0); j.State != store.StateScheduled {
		t.Fatalf("before run_at: %s, want scheduled", j.State)
	}
	n.log.Take()
	n.tick(t, t0.Add(11*time.Second))
	if j := get(t, st, id, t0); j.State != store.StateAvailable {
		t.Errorf("after run_at: %s, want available", j.State)
	}
	if out := n.log.Take(); !strings.Contains(out, `msg="promoted scheduled jobs" n=1`) {
		t.Errorf("log %q lacks the promotion", out)
	}
}

func TestReap(t *testing.T) {
	t.Parallel()
	st := setup(t)
	n := newNode(t, st, "node-a", scheduler.Config{})
	id := enqueue(t, st, 1, store.JobSpec{Queue: "slow", Timeout: time.Second}, t0)[0]
	lease(t, st, "w-stuck", "slow", 1, t0)

	// The worker stays live (2 s < DeadAfter) but its lease ran out.
	n.tick(t, t0.Add(2*time.Second))
	j := get(t, st, id, t0.Add(2*time.Second))
	if j.State == store.StateRunning || len(j.Attempts) != 1 || j.Attempts[0].Outcome != store.OutcomeTimedOut {
		t.Fatalf("job after its lease expired: %s, attempts %+v; want timed_out", j.State, j.Attempts)
	}
	if j.Rescues != 0 {
		t.Errorf("a reaped job counts %d rescues, want 0", j.Rescues)
	}
	if got := counter(t, n.reg, "tether_reaped_total"); got != 1 {
		t.Errorf("tether_reaped_total = %v, want 1", got)
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	st := setup(t)
	n := newNode(t, st, "node-a", scheduler.Config{RetentionSucceeded: 24 * time.Hour, RetentionDead: 720 * time.Hour})
	enqueue(t, st, 2, store.JobSpec{Queue: "done"}, t0)
	jobs := lease(t, st, "w", "done", 2, t0)
	ok, dead := jobs[0], jobs[1]
	if _, err := st.JobAck(t.Context(), &store.JobAckParams{ID: ok.ID, Token: ok.Lease.Token, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.JobFail(t.Context(), &store.JobFailParams{ID: dead.ID, Token: dead.Lease.Token, Error: "no", NoRetry: true, Now: t0}); err != nil {
		t.Fatal(err)
	}
	exists := func(id string, now time.Time) bool {
		_, err := st.JobGet(t.Context(), &store.JobGetParams{ID: id, Now: now})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	tests := []struct {
		after        time.Duration // since the jobs ended
		ok, deadKept bool
	}{
		{23 * time.Hour, true, true},
		{25 * time.Hour, false, true},
		{719 * time.Hour, false, true},
		{721 * time.Hour, false, false},
	}
	for _, tt := range tests {
		now := t0.Add(tt.after)
		n.tick(t, now)
		if exists(ok.ID, now) != tt.ok || exists(dead.ID, now) != tt.deadKept {
			t.Errorf("after %v: succeeded kept %v, dead kept %v; want %v, %v",
				tt.after, exists(ok.ID, now), exists(dead.ID, now), tt.ok, tt.deadKept)
		}
	}
}

func TestLogsOnlyWhenWorkDone(t *testing.T) {
	t.Parallel()
	st := setup(t)
	n := newNode(t, st, "node-a", scheduler.Config{})
	n.tick(t, t0)
	if out := n.log.Take(); !strings.Contains(out, "node registered") || strings.Count(out, "\n") != 1 {
		t.Errorf("first tick logged %q, want the registration alone", out)
	}
	for i := 1; i <= 3; i++ {
		n.tick(t, t0.Add(time.Duration(i)*time.Second))
	}
	if out := n.log.Take(); out != "" {
		t.Errorf("idle ticks logged %q", out)
	}
	enqueue(t, st, 3, store.JobSpec{Queue: "x"}, t0)
	lease(t, st, "w-gone", "x", 3, t0.Add(3*time.Second))
	n.tick(t, t0.Add(30*time.Second))
	if out := n.log.Take(); !strings.Contains(out, `msg="recovered orphans" n=3`) || strings.Count(out, "\n") != 1 {
		t.Errorf("tick with a rescue logged %q, want one line", out)
	}
}
