package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var workerTests = []test{
	{"Register", testWorkerRegister},
	{"List", testWorkerList},
	{"HeartbeatRegisters", testWorkerHeartbeatRegisters},
	{"Lost", testWorkerLost},
	{"Cancel", testWorkerCancel},
	{"Deregister", testWorkerDeregister},
	{"OpaqueIDs", testWorkerOpaqueIDs},
	{"PrefixIDs", testWorkerPrefixIDs},
	{"Nodes", testWorkerNodes},
}

func testWorkerRegister(t *testing.T, h *harness) {
	p := &store.WorkerRegisterParams{ID: "w-1", Queues: []string{"mail", "sms"}, Labels: map[string]string{"host": "h1"}, Now: h.now()}
	w, err := h.s.WorkerRegister(h.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	started := h.now()
	for _, got := range []*store.Worker{w, h.workers()["w-1"]} {
		if got == nil {
			t.Fatal("registered worker not in WorkerList")
		}
		if got.ID != "w-1" || !slices.Equal(got.Queues, p.Queues) || got.Labels["host"] != "h1" || len(got.Labels) != 1 {
			t.Errorf("worker = %+v, want w-1 on mail, sms with host=h1", got)
		}
		wantTime(t, "started_at", got.StartedAt, started)
		wantTime(t, "last_heartbeat_at", got.LastHeartbeatAt, started)
		if len(got.InFlight) != 0 {
			t.Errorf("in_flight = %q, want none", got.InFlight)
		}
	}
	// Registering again refreshes the sign of life.
	h.advance(time.Minute)
	p.Now = h.now()
	if _, err := h.s.WorkerRegister(h.ctx, p); err != nil {
		t.Fatal(err)
	}
	wantTime(t, "last_heartbeat_at after re-register", h.workers()["w-1"].LastHeartbeatAt, h.now())
}

func testWorkerList(t *testing.T, h *harness) {
	for _, id := range []string{"b", "a:1", "a"} {
		h.heartbeat(id)
		h.advance(time.Minute)
	}
	j := h.running("b", spec("k", ""))
	list, err := h.s.WorkerList(h.ctx, &store.WorkerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range list {
		got = append(got, w.ID)
		if w.ID == "b" {
			wantSet(t, "b's in_flight", w.InFlight, j.ID)
		}
	}
	if want := []string{"a", "a:1", "b"}; !slices.Equal(got, want) {
		t.Errorf("WorkerList = %q, want %q (by id)", got, want)
	}
	// SeenAfter keeps those heard from since: b leased just now, a a
	// minute ago, a:1 two minutes ago.
	recent, err := h.s.WorkerList(h.ctx, &store.WorkerListParams{SeenAfter: h.now().Add(-90 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, w := range recent {
		got = append(got, w.ID)
	}
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("WorkerList seen in the last 90s = %q, want %q", got, want)
	}
}

func testWorkerHeartbeatRegisters(t *testing.T, h *harness) {
	res := h.heartbeat("new")
	if len(res.Lost) != 0 || len(res.Cancel) != 0 {
		t.Errorf("first heartbeat = %+v, want nothing lost or cancelled", res)
	}
	w := h.workers()["new"]
	if w == nil {
		t.Fatal("a heartbeat did not register the unknown worker")
	}
	wantTime(t, "last_heartbeat_at", w.LastHeartbeatAt, h.now())
	// A dead worker's heartbeat makes it live again.
	h.advance(time.Hour)
	h.heartbeat("new")
	wantTime(t, "last_heartbeat_at after an hour's silence", h.workers()["new"].LastHeartbeatAt, h.now())
}

func testWorkerLost(t *testing.T, h *harness) {
	// w holds two jobs: one it goes silent on (recovered), one past its
	// timeout (reaped).
	orphaned := h.enqueueOne(store.JobSpec{Kind: "k", Priority: 1, Timeout: time.Hour})
	reaped := h.enqueueOne(store.JobSpec{Kind: "k", Timeout: 10 * time.Second})
	h.lease("w", 2)
	h.advance(time.Minute)
	if got := h.reap(); len(got) != 1 || got[0].ID != reaped.ID {
		t.Fatalf("reaped %q, want [%s]", ids(got), reaped.ID)
	}
	if got := h.recover("node-1", h.orphans(h.now().Add(-store.DefaultDeadAfter))); len(got) != 1 || got[0].ID != orphaned.ID {
		t.Fatalf("recovered %q, want [%s]", ids(got), orphaned.ID)
	}
	// w comes back and leases again; a job it holds is never lost.
	held := h.running("w", spec("k", "other"))
	other := h.enqueueOne(spec("k", "other"))
	res := h.heartbeat("w", orphaned.ID, reaped.ID, held.ID, other.ID, "01950000-0000-7000-8000-000000000000")
	wantSet(t, "lost", res.Lost, orphaned.ID, reaped.ID, other.ID, "01950000-0000-7000-8000-000000000000")
	// Each taken job is reported once: the next heartbeat lists none.
	h.advance(time.Second)
	if res := h.heartbeat("w"); len(res.Lost) != 0 {
		t.Errorf("second heartbeat lost %q, want nothing", res.Lost)
	}
	// A job named in flight that the worker does not hold stays lost.
	wantSet(t, "lost in flight", h.heartbeat("w", orphaned.ID, held.ID).Lost, orphaned.ID)
}

func testWorkerCancel(t *testing.T, h *harness) {
	jobs := h.enqueue(spec("k", ""), spec("k", ""))
	h.lease("w", 2)
	h.running("other", spec("k", "q2"))
	h.cancel(jobs[0].ID)
	res := h.heartbeat("w", jobs[0].ID, jobs[1].ID)
	wantSet(t, "cancel", res.Cancel, jobs[0].ID)
	if len(res.Lost) != 0 {
		t.Errorf("lost = %q, want nothing", res.Lost)
	}
	// Cancel lists held jobs whether or not the heartbeat names them.
	wantSet(t, "cancel without in_flight", h.heartbeat("w").Cancel, jobs[0].ID)
	if res := h.heartbeat("other"); len(res.Cancel) != 0 {
		t.Errorf("another worker's heartbeat cancels %q", res.Cancel)
	}
}

func testWorkerDeregister(t *testing.T, h *harness) {
	jobs := h.enqueue(spec("k", ""), spec("k", ""))
	h.lease("w", 2)
	kept := h.running("w-2", spec("k", "q2"))
	h.advance(time.Second)
	if err := h.s.WorkerDeregister(h.ctx, &store.WorkerDeregisterParams{ID: "w", Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		got := h.get(j.ID)
		wantState(t, got, store.StateAvailable, 0, 0)
		wantOutcome(t, got, store.OutcomeReleased, h.now())
	}
	wantState(t, h.get(kept.ID), store.StateRunning, 1, 0)
	if _, ok := h.workers()["w"]; ok {
		t.Error("deregistered worker still in WorkerList")
	}
	for _, id := range []string{"w", "never-seen"} {
		err := h.s.WorkerDeregister(h.ctx, &store.WorkerDeregisterParams{ID: id, Now: h.now()})
		wantErr(t, "WorkerDeregister("+id+")", err, store.ErrNotFound)
	}
}

// testWorkerOpaqueIDs runs a worker's whole life under ids full of the
// separators that key schemes and URL paths use.
func testWorkerOpaqueIDs(t *testing.T, h *harness) {
	for _, id := range []string{"10.0.0.5:8080/w-3", "user@host:99:w", "a%2Fb c", "w*?[x]"} {
		queue := "q-" + id[:1]
		if _, err := h.s.WorkerRegister(h.ctx, &store.WorkerRegisterParams{ID: id, Now: h.now()}); err != nil {
			t.Fatalf("register %q: %v", id, err)
		}
		j := h.running(id, spec("k", queue))
		if j.Lease.WorkerID != id {
			t.Errorf("lease worker = %q, want %q", j.Lease.WorkerID, id)
		}
		h.heartbeat(id, j.ID)
		if w := h.workers()[id]; w == nil || !slices.Equal(w.InFlight, []string{j.ID}) {
			t.Errorf("WorkerList entry of %q = %+v, want it holding %s", id, w, j.ID)
		}
		orphans := h.orphans(h.advance(time.Minute).Add(-store.DefaultDeadAfter))
		if len(orphans) != 1 || orphans[0].WorkerID != id || orphans[0].JobID != j.ID {
			t.Fatalf("orphans = %+v, want %s of %q", orphans, j.ID, id)
		}
		if got := h.recover("node-1", orphans); len(got) != 1 {
			t.Fatalf("recovered %d jobs of %q, want 1", len(got), id)
		}
		if a := lastAttempt(t, h.get(j.ID)); a.WorkerID != id {
			t.Errorf("attempt worker = %q, want %q", a.WorkerID, id)
		}
		wantSet(t, "lost of "+id, h.heartbeat(id).Lost, j.ID)
		l := h.leaseOne(id, queue)
		if err := h.s.WorkerDeregister(h.ctx, &store.WorkerDeregisterParams{ID: id, Now: h.now()}); err != nil {
			t.Fatalf("deregister %q: %v", id, err)
		}
		wantState(t, h.get(l.ID), store.StateAvailable, 1, 1)
		if _, ok := h.workers()[id]; ok {
			t.Errorf("%q still listed after deregister", id)
		}
	}
}

// testWorkerPrefixIDs: "a" is a prefix of "a:1"; a backend that builds
// keys or patterns from ids must never mix them up.
func testWorkerPrefixIDs(t *testing.T, h *harness) {
	t0 := h.now()
	ja := h.running("a", spec("k", "qa"))
	j1 := h.running("a:1", spec("k", "q1"))
	h.advance(10 * time.Second)
	h.heartbeat("a:1")
	h.advance(10 * time.Second)

	ws := h.workers()
	if ws["a"] == nil || ws["a:1"] == nil {
		t.Fatalf("WorkerList = %v, want a and a:1", ws)
	}
	wantTime(t, "a's last_heartbeat_at", ws["a"].LastHeartbeatAt, t0)
	wantTime(t, "a:1's last_heartbeat_at", ws["a:1"].LastHeartbeatAt, t0.Add(10*time.Second))
	wantSet(t, "a's in_flight", ws["a"].InFlight, ja.ID)
	wantSet(t, "a:1's in_flight", ws["a:1"].InFlight, j1.ID)

	orphans := h.orphans(t0.Add(5 * time.Second))
	if len(orphans) != 1 || orphans[0].WorkerID != "a" || orphans[0].JobID != ja.ID {
		t.Fatalf("orphans = %+v, want only a's job", orphans)
	}
	h.recover("node-1", orphans)
	if res := h.heartbeat("a:1", j1.ID); len(res.Lost) != 0 {
		t.Errorf("a:1 lost %q, want nothing", res.Lost)
	}
	wantSet(t, "a's lost", h.heartbeat("a").Lost, ja.ID)

	// Deregistering a leaves a:1 and its job alone, and the other way round.
	h.leaseOne("a", "qa")
	if err := h.s.WorkerDeregister(h.ctx, &store.WorkerDeregisterParams{ID: "a", Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	wantState(t, h.get(j1.ID), store.StateRunning, 1, 0)
	if ws := h.workers(); ws["a:1"] == nil || ws["a"] != nil {
		t.Errorf("after deregistering a: workers %v, want only a:1", ws)
	}
	wantErr(t, "deregister a again", h.s.WorkerDeregister(h.ctx, &store.WorkerDeregisterParams{ID: "a", Now: h.now()}), store.ErrNotFound)
}

func testWorkerNodes(t *testing.T, h *harness) {
	beat := func(id, version string, started time.Time) {
		t.Helper()
		if err := h.s.NodeHeartbeat(h.ctx, &store.NodeHeartbeatParams{ID: id, Version: version, StartedAt: started, Now: h.now()}); err != nil {
			t.Fatal(err)
		}
	}
	started := h.now().Add(-time.Hour)
	beat("node-1", "v1", started)
	h.advance(time.Second)
	beat("node-2:8080", "v2", h.now())
	list := func() []*store.Node {
		t.Helper()
		nodes, err := h.s.NodeList(h.ctx, &store.NodeListParams{})
		if err != nil {
			t.Fatal(err)
		}
		return nodes
	}
	if got := list(); len(got) != 2 || got[0].ID != "node-2:8080" || got[1].ID != "node-1" {
		t.Fatalf("NodeList = %+v, want node-2:8080 then node-1 (most recent first)", got)
	}
	h.advance(time.Second)
	beat("node-1", "v1", started)
	got := list()
	if len(got) != 2 || got[0].ID != "node-1" {
		t.Fatalf("NodeList after node-1's heartbeat = %+v, want node-1 first", got)
	}
	if got[0].Version != "v1" {
		t.Errorf("version = %q, want v1", got[0].Version)
	}
	wantTime(t, "started_at", got[0].StartedAt, started)
	wantTime(t, "last_heartbeat_at", got[0].LastHeartbeatAt, h.now())
	if ws := h.workers(); len(ws) != 0 {
		t.Errorf("nodes are listed as workers: %v", ws)
	}

	// A stop is recorded on the node, which stays listed, gone at once; a
	// heartbeat clears it. Stopping an unknown node changes nothing.
	stop := func(id string) {
		t.Helper()
		if err := h.s.NodeStop(h.ctx, &store.NodeStopParams{ID: id, Now: h.now()}); err != nil {
			t.Fatalf("NodeStop(%q): %v", id, err)
		}
	}
	h.advance(time.Second)
	stop("node-2:8080")
	stop("never-started")
	got = list()
	if len(got) != 2 || got[1].ID != "node-2:8080" || got[1].StoppedAt == nil {
		t.Fatalf("NodeList after node-2:8080 stopped = %+v, want both, node-2:8080 stopped", got)
	}
	wantTime(t, "stopped_at", *got[1].StoppedAt, h.now())
	if s := got[1].StateAt(h.now(), time.Hour); s != store.NodeGone {
		t.Errorf("a stopped node is %s, want gone", s)
	}
	if got[0].StoppedAt != nil {
		t.Errorf("node-1 reads stopped at %v", got[0].StoppedAt)
	}
	beat("node-2:8080", "v3", h.now())
	if got = list(); got[0].ID != "node-2:8080" || got[0].StoppedAt != nil || got[0].Version != "v3" {
		t.Errorf("after a new heartbeat node-2:8080 reads %+v, want it live again", got[0])
	}
}
