package storetest

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var pruneTests = []test{
	{"Retention", testPruneRetention},
	{"Limit", testPruneLimit},
	{"SilentWorkers", testPruneSilentWorkers},
	{"SilentNodes", testPruneSilentNodes},
}

func (h *harness) prune(succeededBefore, deadBefore time.Time, limit int) int {
	h.t.Helper()
	n, err := h.s.JobPrune(h.ctx, &store.JobPruneParams{SucceededBefore: succeededBefore, DeadBefore: deadBefore, Limit: limit, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobPrune: %v", err)
	}
	return n
}

// exists reports whether JobGet finds the job.
func (h *harness) exists(id string) bool {
	h.t.Helper()
	_, err := h.s.JobGet(h.ctx, &store.JobGetParams{ID: id, Now: h.now()})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.t.Fatalf("JobGet(%s): %v", id, err)
	}
	return err == nil
}

// finish ends a job in state: succeeded, cancelled or dead.
func (h *harness) finish(queue string, state store.State) *store.Job {
	h.t.Helper()
	j := h.running("w", spec("k", queue))
	switch state {
	case store.StateSucceeded:
		return h.ack(j)
	case store.StateCancelled:
		h.cancel(j.ID)
		return h.fail(j, "stop")
	default:
		got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(h.t, j), Error: "x", NoRetry: true, Now: h.now()})
		if err != nil {
			h.t.Fatalf("JobFail: %v", err)
		}
		return got
	}
}

func testPruneRetention(t *testing.T, h *harness) {
	t0 := h.now()
	// Created at t0 and finished an hour later: retention runs from
	// finished_at, not created_at.
	lateSucceeded := h.enqueueOne(spec("k", "late"))
	lateDead := h.enqueueOne(spec("k", "late"))
	oldSucceeded := h.finish("a", store.StateSucceeded)
	oldCancelled := h.finish("b", store.StateCancelled)
	oldDead := h.finish("c", store.StateDead)
	h.advance(time.Hour)
	l := h.leaseOne("w", "late")
	if l.ID != lateSucceeded.ID {
		t.Fatalf("leased %s, want %s", l.ID, lateSucceeded.ID)
	}
	h.ack(l)
	l = h.leaseOne("w", "late")
	if _, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: l.ID, Token: token(t, l), Error: "x", NoRetry: true, Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	// Unfinished jobs are never pruned, however old.
	available := h.enqueueOne(store.JobSpec{Kind: "k", Queue: "d", RunAt: t0.Add(-time.Hour)})
	scheduled := h.enqueueOne(store.JobSpec{Kind: "k", Queue: "e", RunAt: t0.Add(48 * time.Hour)})
	running := h.running("w", store.JobSpec{Kind: "k", Queue: "f", RunAt: t0.Add(-time.Hour)})
	h.advance(72 * time.Hour)

	cut := t0.Add(30 * time.Minute)
	if n := h.prune(cut, cut, 100); n != 3 {
		t.Errorf("JobPrune = %d, want the 3 jobs finished before the cut-off", n)
	}
	for _, j := range []*store.Job{oldSucceeded, oldCancelled, oldDead} {
		if h.exists(j.ID) {
			t.Errorf("%s job %s finished before the cut-off survived", j.State, j.ID)
		}
	}
	for _, j := range []*store.Job{lateSucceeded, lateDead, available, scheduled, running} {
		if !h.exists(j.ID) {
			t.Errorf("job %s (kept) was pruned", j.ID)
		}
	}
	// Dead jobs keep their longer retention.
	if n := h.prune(h.now(), cut, 100); n != 1 || h.exists(lateSucceeded.ID) || !h.exists(lateDead.ID) {
		t.Errorf("JobPrune with only the succeeded cut-off moved = %d, want the late succeeded job alone (dead jobs keep their own cut-off)", n)
	}
	if n := h.prune(h.now(), h.now(), 100); n != 1 || h.exists(lateDead.ID) {
		t.Errorf("JobPrune of the late dead job = %d, want 1", n)
	}
	if n := h.prune(h.now(), h.now(), 100); n != 0 {
		t.Errorf("JobPrune with nothing left = %d, want 0", n)
	}
	q := h.queue("f")
	if q.Counts[store.StateRunning] != 1 {
		t.Errorf("queue f = %v, want its running job", q.Counts)
	}
}

func testPruneLimit(t *testing.T, h *harness) {
	const n = 25
	for range n {
		h.enqueueOne(spec("k", ""))
	}
	jobs := h.lease("w", n)
	if len(jobs) != n {
		t.Fatalf("leased %d jobs, want %d", len(jobs), n)
	}
	for _, j := range jobs {
		h.ack(j)
	}
	h.advance(48 * time.Hour)
	// Bounded batches: the caller loops until a short batch.
	var batches []int
	for {
		got := h.prune(h.now(), h.now(), 10)
		batches = append(batches, got)
		if got < 10 || len(batches) > n {
			break
		}
	}
	if len(batches) != 3 || batches[0] != 10 || batches[1] != 10 || batches[2] != 5 {
		t.Errorf("JobPrune batches of limit 10 = %v, want [10 10 5]", batches)
	}
	for _, j := range jobs {
		if h.exists(j.ID) {
			t.Errorf("job %s survived the prune loop", j.ID)
		}
	}
}

// testPruneSilentWorkers: WorkerPrune forgets workers silent since the
// cut-off, except one that still holds a running job, and nothing else.
func testPruneSilentWorkers(t *testing.T, h *harness) {
	h.heartbeat("idle")
	held := h.running("holder", spec("k", "q"))
	h.advance(time.Hour)
	h.heartbeat("recent")
	prune := func(before time.Time) int {
		t.Helper()
		n, err := h.s.WorkerPrune(h.ctx, &store.WorkerPruneParams{SilentBefore: before, Limit: 100})
		if err != nil {
			t.Fatalf("WorkerPrune: %v", err)
		}
		return n
	}
	if n := prune(h.now().Add(-time.Hour)); n != 0 {
		t.Errorf("WorkerPrune at the idle worker's last sign of life = %d, want 0 (strictly before)", n)
	}
	if n := prune(h.now().Add(-time.Minute)); n != 1 {
		t.Errorf("WorkerPrune = %d, want the idle worker alone", n)
	}
	ws := h.workers()
	if ws["idle"] != nil || ws["holder"] == nil || ws["recent"] == nil {
		t.Errorf("workers after the prune: %v; want holder and recent", slices.Sorted(maps.Keys(ws)))
	}
	// Once its job is settled the holder holds nothing and goes too.
	h.ack(held)
	if n := prune(h.now().Add(-time.Minute)); n != 1 || h.workers()["holder"] != nil {
		t.Errorf("WorkerPrune after the ack = %d, want the holder", n)
	}
}

// testPruneSilentNodes: NodePrune forgets nodes last heard from before the
// cut-off, stopped or not.
func testPruneSilentNodes(t *testing.T, h *harness) {
	beat := func(id string) {
		t.Helper()
		if err := h.s.NodeHeartbeat(h.ctx, &store.NodeHeartbeatParams{ID: id, Version: "v", StartedAt: h.now(), Now: h.now()}); err != nil {
			t.Fatal(err)
		}
	}
	beat("old")
	beat("old-stopped")
	if err := h.s.NodeStop(h.ctx, &store.NodeStopParams{ID: "old-stopped", Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Hour)
	beat("new")
	n, err := h.s.NodePrune(h.ctx, &store.NodePruneParams{SilentBefore: h.now().Add(-time.Minute), Limit: 100})
	if err != nil || n != 2 {
		t.Errorf("NodePrune = %d, %v; want the two old nodes", n, err)
	}
	nodes, err := h.s.NodeList(h.ctx, &store.NodeListParams{})
	if err != nil || len(nodes) != 1 || nodes[0].ID != "new" {
		t.Errorf("nodes after the prune: %v (%v), want new alone", nodes, err)
	}
}
