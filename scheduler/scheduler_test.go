package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tetherq/tether/store"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// testClock is an injected clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Take returns what was logged since the last Take.
func (s *syncBuffer) Take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	s.b.Reset()
	return out
}

type fixture struct {
	store *fakeStore
	clock *testClock
	log   *syncBuffer
	reg   *prometheus.Registry
	s     *Scheduler
}

func setup(t *testing.T, cfg Config) *fixture {
	t.Helper()
	f := &fixture{store: newFakeStore(), clock: &testClock{now: t0}, log: &syncBuffer{}, reg: prometheus.NewRegistry()}
	cfg.Store = f.store
	if cfg.NodeID == "" {
		cfg.NodeID = "node-a"
	}
	cfg.Now = f.clock.Now
	cfg.Logger = slog.New(slog.NewTextHandler(f.log, nil))
	cfg.Registerer = f.reg
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.s = s
	return f
}

func TestNewRequiresStoreAndNodeID(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{NodeID: "n"}); err == nil {
		t.Error("New without Store: no error")
	}
	if _, err := New(Config{Store: newFakeStore()}); err == nil {
		t.Error("New without NodeID: no error")
	}
}

func TestTickLogsOnlyWork(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	ctx := t.Context()

	f.s.Tick(ctx)
	if out := f.log.Take(); !strings.Contains(out, `msg="node registered" n=1`) {
		t.Errorf("first tick logged %q, want the registration", out)
	}
	f.clock.Advance(time.Second)
	f.s.Tick(ctx)
	if out := f.log.Take(); out != "" {
		t.Errorf("idle tick logged %q, want nothing", out)
	}

	f.store.due, f.store.expired, f.store.finished = 3, 2, 1
	f.s.Tick(ctx)
	out := f.log.Take()
	for _, want := range []string{
		`msg="promoted scheduled jobs" n=3`,
		`msg="reaped timed-out jobs" n=2`,
		`msg="pruned finished jobs" n=1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "recovered") || strings.Contains(out, "node registered") {
		t.Errorf("log %q names a task that did nothing", out)
	}
}

func TestTickFailingTaskDoesNotStopOthers(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	f.store.fail["JobPromote"] = errors.New("disk on fire")
	f.store.finished = 4

	f.s.Tick(t.Context())
	out := f.log.Take()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "disk on fire") {
		t.Errorf("log %q lacks the error", out)
	}
	if f.store.finished != 0 {
		t.Errorf("prune after a failed promote left %d jobs", f.store.finished)
	}
}

func TestTickFinishesAfterCancel(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f.store.due = 1
	f.s.Tick(ctx)
	if f.store.due != 0 {
		t.Error("a tick under a cancelled context did not run its tasks")
	}
}

func TestRunReturnsNilWhenCancelled(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{Tick: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := f.s.Run(ctx); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if n := f.store.count("NodeHeartbeat"); n != 1 {
		t.Errorf("Run ticked %d times before returning, want 1", n)
	}
	// On its way out the node says it stopped: gone at once for the others.
	if n := f.store.nodes["node-a"]; n == nil || n.StoppedAt == nil || n.StateAt(t0, time.Hour) != store.NodeGone {
		t.Errorf("after Run the node's row is %+v, want it stopped", n)
	}
}

func TestRecoverUsesLiveNodes(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{DeadAfter: 10 * time.Second})
	now := t0
	f.store.nodes = map[string]*store.Node{
		// The node itself, with a stale row: it never counts itself dead.
		"node-a":     {ID: "node-a", LastHeartbeatAt: now.Add(-time.Hour)},
		"node-fresh": {ID: "node-fresh", LastHeartbeatAt: now.Add(-9 * time.Second)},
		"node-stale": {ID: "node-stale", LastHeartbeatAt: now.Add(-10 * time.Second)},
		// Heard from a moment ago, but it said it stopped.
		"node-stopped": {ID: "node-stopped", LastHeartbeatAt: now.Add(-time.Second), StoppedAt: ptr(now.Add(-time.Second))},
	}
	rec := &recoverer{store: f.store, nodeID: "node-a", deadAfter: 10 * time.Second, maxRescues: 5, metrics: f.s.metrics}
	if _, err := rec.runOnce(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	got := f.store.orphanArgs[0]
	if !got.DeadBefore.Equal(now.Add(-10 * time.Second)) {
		t.Errorf("DeadBefore = %v, want now − DeadAfter", got.DeadBefore)
	}
	live := fmt.Sprint(got.LiveIDs)
	if live != "[node-a node-fresh]" {
		t.Errorf("LiveIDs = %s, want [node-a node-fresh]", live)
	}
}

func TestRecoverDrainsFullBatches(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{DeadAfter: 15 * time.Second})
	const n = 2*recoverBatch + 500
	for i := range n {
		f.store.running = append(f.store.running, store.Orphan{
			JobID: fmt.Sprintf("job-%d", i), WorkerID: "w-dead", Token: fmt.Sprint(i),
			LastHeartbeatAt: t0.Add(-20 * time.Second),
		})
	}
	// A live worker's job and a job of a node stay put.
	f.store.running = append(f.store.running,
		store.Orphan{JobID: "live", WorkerID: "w-live", Token: "x", LastHeartbeatAt: t0.Add(-time.Second)},
		store.Orphan{JobID: "mine", WorkerID: "node-a", Token: "y", LastHeartbeatAt: t0.Add(-time.Hour)},
	)

	f.s.Tick(t.Context())
	if len(f.store.running) != 2 {
		t.Errorf("%d jobs still running after the tick, want 2", len(f.store.running))
	}
	if c := f.store.count("JobRecover"); c != 3 {
		t.Errorf("JobRecover called %d times, want 3 (two full batches and a short one)", c)
	}
	if got := testutil.ToFloat64(f.s.metrics.rescues); got != n {
		t.Errorf("tether_rescues_total = %v, want %d", got, n)
	}
	if got := testutil.CollectAndCount(f.reg, "tether_recovery_latency_seconds"); got != 1 {
		t.Errorf("recovery latency series = %d, want 1", got)
	}
	if !strings.Contains(f.log.Take(), fmt.Sprintf(`msg="recovered orphans" n=%d`, n)) {
		t.Error("the rescue was not logged")
	}
}

// orphansOf adds n running jobs of workers silent since t0 − 20 s, spread
// over workers workers.
func (f *fakeStore) orphansOf(n, workers int) {
	for i := range n {
		f.running = append(f.running, store.Orphan{
			JobID: fmt.Sprintf("job-%d", i), WorkerID: fmt.Sprintf("w-%d", i%workers), Token: fmt.Sprint(i),
			LastHeartbeatAt: t0.Add(-20 * time.Second),
		})
	}
}

// A tick rescues every orphan it finds, up to recoverMaxBatches full
// batches: 10,000 jobs of 100 workers that went silent together are back
// in the tick that sees them dead, and a bigger pile drains over the next
// ticks.
func TestRecoverBulkInOneTick(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{DeadAfter: 2 * time.Second})
	f.store.orphansOf(10_000, 100)
	f.s.Tick(t.Context())
	if len(f.store.running) != 0 {
		t.Fatalf("%d of 10,000 orphans still running after the tick", len(f.store.running))
	}

	f.store.orphansOf(recoverMaxBatches*recoverBatch+10, 100)
	f.s.Tick(t.Context())
	if len(f.store.running) != 10 {
		t.Errorf("%d orphans left after a tick, want 10 (the tick's bound is %d batches)", len(f.store.running), recoverMaxBatches)
	}
	f.s.Tick(t.Context())
	if len(f.store.running) != 0 {
		t.Errorf("%d orphans left after the next tick", len(f.store.running))
	}
}

// A batch that wins nothing (another node won every job of it, or the
// store's compare-and-set keeps missing) ends the tick's recovery instead
// of listing the same orphans again.
func TestRecoverStopsWhenABatchWinsNothing(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{DeadAfter: 2 * time.Second})
	f.store.orphansOf(3*recoverBatch, 30)
	f.store.missCAS = true
	f.s.Tick(t.Context())
	if l, r := f.store.count("JobListOrphans"), f.store.count("JobRecover"); l != 1 || r != 1 {
		t.Errorf("a tick whose batch won nothing listed %d times and recovered %d times, want once each", l, r)
	}
}

func TestRecoveryLatency(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	f.store.running = []store.Orphan{
		{JobID: "a", WorkerID: "w", Token: "1", LastHeartbeatAt: t0.Add(-16 * time.Second)},
		{JobID: "b", WorkerID: "w", Token: "2", LastHeartbeatAt: t0.Add(-16 * time.Second)},
		{JobID: "c", WorkerID: "never-registered", Token: "3"},
	}
	f.s.Tick(t.Context())
	want := `
# HELP tether_recovery_latency_seconds Time from a dead owner's last sign of life to the rescue of its job.
# TYPE tether_recovery_latency_seconds histogram
tether_recovery_latency_seconds_bucket{le="0.1"} 0
tether_recovery_latency_seconds_bucket{le="0.25"} 0
tether_recovery_latency_seconds_bucket{le="0.5"} 0
tether_recovery_latency_seconds_bucket{le="1"} 0
tether_recovery_latency_seconds_bucket{le="2"} 0
tether_recovery_latency_seconds_bucket{le="3"} 0
tether_recovery_latency_seconds_bucket{le="5"} 0
tether_recovery_latency_seconds_bucket{le="10"} 0
tether_recovery_latency_seconds_bucket{le="15"} 0
tether_recovery_latency_seconds_bucket{le="16"} 2
tether_recovery_latency_seconds_bucket{le="17"} 2
tether_recovery_latency_seconds_bucket{le="20"} 2
tether_recovery_latency_seconds_bucket{le="30"} 2
tether_recovery_latency_seconds_bucket{le="60"} 2
tether_recovery_latency_seconds_bucket{le="120"} 2
tether_recovery_latency_seconds_bucket{le="+Inf"} 2
tether_recovery_latency_seconds_sum 32
tether_recovery_latency_seconds_count 2
`
	if err := testutil.GatherAndCompare(f.reg, strings.NewReader(want), "tether_recovery_latency_seconds"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(f.s.metrics.rescues); got != 3 {
		t.Errorf("tether_rescues_total = %v, want 3", got)
	}
}

func TestBatchedTasksAreBounded(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	f.store.finished = pruneMaxBatches*pruneBatch + 2000
	f.store.expired = 10*reapBatch + 1
	f.s.Tick(t.Context())
	if f.store.finished != 2000 {
		t.Errorf("one tick left %d finished jobs, want 2000 (%d batches pruned)", f.store.finished, pruneMaxBatches)
	}
	if f.store.expired != 1 {
		t.Errorf("one tick left %d expired leases, want 1", f.store.expired)
	}
	if got := testutil.ToFloat64(f.s.metrics.reaped); got != 10*reapBatch {
		t.Errorf("tether_reaped_total = %v, want %d", got, 10*reapBatch)
	}
	f.s.Tick(t.Context())
	if f.store.finished != 0 || f.store.expired != 0 {
		t.Errorf("the next tick left %d finished and %d expired", f.store.finished, f.store.expired)
	}
}

func TestPruneRetention(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{RetentionSucceeded: time.Hour, RetentionDead: 48 * time.Hour})
	f.s.Tick(t.Context())
	p := f.store.pruneArgs[0]
	if !p.SucceededBefore.Equal(t0.Add(-time.Hour)) || !p.DeadBefore.Equal(t0.Add(-48*time.Hour)) {
		t.Errorf("prune cut-offs %v and %v, want now − 1 h and now − 48 h", p.SucceededBefore, p.DeadBefore)
	}
	if p.Limit != pruneBatch || !p.Now.Equal(t0) {
		t.Errorf("prune Limit %d Now %v", p.Limit, p.Now)
	}
}

func TestInBatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		backlog    int // items waiting
		maxBatches int
		want       int // items handled
		calls      int
	}{
		{backlog: 0, maxBatches: 3, want: 0, calls: 1},
		{backlog: 5, maxBatches: 3, want: 5, calls: 1},
		{backlog: 10, maxBatches: 3, want: 10, calls: 2}, // a full batch, then an empty one
		{backlog: 25, maxBatches: 3, want: 25, calls: 3},
		{backlog: 100, maxBatches: 3, want: 30, calls: 3},
	}
	for _, tt := range tests {
		left, calls := tt.backlog, 0
		got, err := inBatches(10, tt.maxBatches, func(limit int) (int, error) {
			calls++
			n := min(limit, left)
			left -= n
			return n, nil
		})
		if err != nil || got != tt.want || calls != tt.calls {
			t.Errorf("backlog %d: got %d in %d calls (%v), want %d in %d", tt.backlog, got, calls, err, tt.want, tt.calls)
		}
	}
}

func TestMetricsRegistered(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	f.store.expired = 1
	f.s.Tick(t.Context())
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	if got := strings.Join(names, " "); got != "tether_reaped_total tether_recovery_latency_seconds tether_rescues_total tether_schedule_fire_lag_seconds" {
		t.Errorf("registered %s", got)
	}
	if _, err := New(Config{Store: f.store, NodeID: "again", Registerer: f.reg}); err == nil {
		t.Error("a second registration on the same registry: no error")
	}
}

func ptr[T any](v T) *T { return &v }

// A store that cannot list due schedules fails the schedule task alone:
// the error is logged and promote still runs.
func TestTickScheduleListFails(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	f.store.fail["ScheduleListDue"] = errors.New("schedules unreadable")
	f.store.due = 2
	f.s.Tick(t.Context())
	out := f.log.Take()
	if !strings.Contains(out, "task=schedule") || !strings.Contains(out, "schedules unreadable") {
		t.Errorf("log %q lacks the schedule task's error", out)
	}
	if f.store.due != 0 {
		t.Errorf("promote after a failed schedule task left %d jobs", f.store.due)
	}
}
