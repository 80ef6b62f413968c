package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

var leaseTests = []test{
	{"Fields", testLeaseFields},
	{"Order", testLeaseOrder},
	{"Max", testLeaseMax},
	{"Kinds", testLeaseKinds},
	{"Queues", testLeaseQueues},
	{"Paused", testLeasePaused},
	{"ScheduledUntilPromoted", testLeaseScheduledUntilPromoted},
	{"PromoteLimit", testLeasePromoteLimit},
	{"RegistersWorker", testLeaseRegistersWorker},
	{"EmptyLeaseHeartbeats", testLeaseEmptyHeartbeats},
	{"Concurrent", testLeaseConcurrent},
}

func testLeaseFields(t *testing.T, h *harness) {
	j := h.enqueueOne(store.JobSpec{Kind: "k", Timeout: 90 * time.Second})
	h.advance(time.Second)
	got := h.leaseOne("w-1")
	if got.ID != j.ID {
		t.Fatalf("leased %s, want %s", got.ID, j.ID)
	}
	for _, l := range []*store.Job{got, h.get(j.ID)} {
		wantState(t, l, store.StateRunning, 1, 0)
		if l.Lease == nil {
			continue
		}
		if l.Lease.WorkerID != "w-1" {
			t.Errorf("lease worker = %q, want w-1", l.Lease.WorkerID)
		}
		if !tokenRE.MatchString(l.Lease.Token) {
			t.Errorf("token %q is not at least 32 hex characters (128 bits)", l.Lease.Token)
		}
		wantTime(t, "expires_at", l.Lease.ExpiresAt, h.now().Add(90*time.Second))
		wantTimePtr(t, "started_at", l.StartedAt, h.now())
	}
	a := lastAttempt(t, h.get(j.ID))
	if a.Outcome != store.OutcomeRunning || a.Attempt != 1 || a.WorkerID != "w-1" || a.FinishedAt != nil || a.ID == "" {
		t.Errorf("open attempt = %+v, want attempt 1 of w-1, running", a)
	}
	wantTime(t, "attempt started_at", a.StartedAt, h.now())

	// Every lease gets a fresh token, even of the same job.
	tokens := map[string]bool{got.Lease.Token: true}
	for i := range 20 {
		l := h.release(h.get(j.ID), 0)
		if l.State != store.StateAvailable {
			t.Fatalf("release: %s", l.State)
		}
		l = h.leaseOne(fmt.Sprintf("w-%d", i))
		if tokens[token(t, l)] {
			t.Fatalf("lease %d reused token %s", i+2, l.Lease.Token)
		}
		tokens[l.Lease.Token] = true
	}
}

func testLeaseOrder(t *testing.T, h *harness) {
	now := h.now()
	jobs := h.enqueue(
		store.JobSpec{Kind: "a", RunAt: now.Add(-time.Minute)},
		store.JobSpec{Kind: "b", Priority: 5},
		store.JobSpec{Kind: "c", RunAt: now.Add(-2 * time.Minute)},
		store.JobSpec{Kind: "d", RunAt: now.Add(-time.Minute)},
		store.JobSpec{Kind: "e", Priority: -3, RunAt: now.Add(-time.Hour)},
		store.JobSpec{Kind: "f", Priority: 5, RunAt: now.Add(-time.Second)},
	)
	// Priority high first, then run_at, then id (a and d tie on both).
	tie := []string{jobs[0].ID, jobs[3].ID}
	slices.Sort(tie)
	want := []string{jobs[5].ID, jobs[1].ID, jobs[2].ID, tie[0], tie[1], jobs[4].ID}
	var got []string
	for range want {
		got = append(got, h.leaseOne("w").ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("lease order = %q\nwant          %q", got, want)
	}
	if rest := h.lease("w", 10); len(rest) != 0 {
		t.Errorf("leased %d more jobs from an empty queue", len(rest))
	}
}

func testLeaseMax(t *testing.T, h *harness) {
	for range 5 {
		h.enqueueOne(store.JobSpec{Kind: "k"})
	}
	if got := h.lease("w", 3); len(got) != 3 {
		t.Errorf("Max 3 leased %d jobs", len(got))
	}
	if got := h.lease("w", 3); len(got) != 2 {
		t.Errorf("Max 3 with 2 left leased %d jobs", len(got))
	}
	if got := h.lease("w", 3); len(got) != 0 {
		t.Errorf("lease of an empty queue = %d jobs, want none", len(got))
	}
}

func testLeaseKinds(t *testing.T, h *harness) {
	jobs := h.enqueue(spec("a", ""), spec("b", ""), spec("c", ""), spec("b", ""))
	got, err := h.s.JobLease(h.ctx, &store.JobLeaseParams{
		WorkerID: "w", Queues: []string{store.DefaultQueue}, Kinds: []string{"b", "c"}, Max: 10, Now: h.now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	wantSet(t, "leased with kinds b, c", ids(got), jobs[1].ID, jobs[2].ID, jobs[3].ID)
	wantState(t, h.get(jobs[0].ID), store.StateAvailable, 0, 0)
}

func testLeaseQueues(t *testing.T, h *harness) {
	jobs := h.enqueue(spec("k", "q1"), spec("k", "q2"), spec("k", "q3"))
	got := h.lease("w", 10, "q1", "q3")
	wantSet(t, "leased from q1 and q3", ids(got), jobs[0].ID, jobs[2].ID)
	wantState(t, h.get(jobs[1].ID), store.StateAvailable, 0, 0)
}

func testLeasePaused(t *testing.T, h *harness) {
	jobs := h.enqueue(spec("k", "paused"), spec("k", "open"))
	q, err := h.s.QueueSetPaused(h.ctx, &store.QueueSetPausedParams{Name: "paused", Paused: true, Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	if q.Name != "paused" || !q.Paused {
		t.Errorf("QueueSetPaused = %+v, want paused", q)
	}
	got := h.lease("w", 10, "paused", "open")
	wantSet(t, "leased with one queue paused", ids(got), jobs[1].ID)
	if _, err := h.s.QueueSetPaused(h.ctx, &store.QueueSetPausedParams{Name: "paused", Paused: false, Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	got = h.lease("w", 10, "paused", "open")
	wantSet(t, "leased after resume", ids(got), jobs[0].ID)
}

func testLeaseScheduledUntilPromoted(t *testing.T, h *harness) {
	j := h.enqueueOne(store.JobSpec{Kind: "k", RunAt: h.now().Add(time.Minute)})
	if got := h.lease("w", 10); len(got) != 0 {
		t.Fatalf("leased a job scheduled a minute ahead")
	}
	if n := h.promote(); n != 0 {
		t.Errorf("JobPromote before run_at = %d, want 0", n)
	}
	h.advance(time.Minute + time.Second)
	if n := h.promote(); n != 1 {
		t.Errorf("JobPromote after run_at = %d, want 1", n)
	}
	wantState(t, h.get(j.ID), store.StateAvailable, 0, 0)
	if n := h.promote(); n != 0 {
		t.Errorf("second JobPromote = %d, want 0", n)
	}
	if got := h.leaseOne("w"); got.ID != j.ID {
		t.Errorf("leased %s, want the promoted job %s", got.ID, j.ID)
	}
}

func testLeasePromoteLimit(t *testing.T, h *harness) {
	for range 3 {
		h.enqueueOne(store.JobSpec{Kind: "k", RunAt: h.now().Add(time.Second)})
	}
	h.advance(time.Minute)
	var got []int
	for range 3 {
		n, err := h.s.JobPromote(h.ctx, &store.JobPromoteParams{Limit: 2, Now: h.now()})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if fmt.Sprint(got) != "[2 1 0]" {
		t.Errorf("JobPromote with Limit 2, three times = %v, want [2 1 0]", got)
	}
}

func testLeaseRegistersWorker(t *testing.T, h *harness) {
	j := h.enqueueOne(spec("k", ""))
	h.advance(time.Second)
	h.leaseOne("w-1")
	w := h.workers()["w-1"]
	if w == nil {
		t.Fatal("the leasing worker is not in WorkerList")
	}
	wantTime(t, "last_heartbeat_at", w.LastHeartbeatAt, h.now())
	wantSet(t, "in_flight", w.InFlight, j.ID)
}

func testLeaseEmptyHeartbeats(t *testing.T, h *harness) {
	// A worker long-polling an empty queue is alive.
	h.lease("idle", 1)
	h.advance(10 * time.Second)
	h.lease("idle", 1)
	w := h.workers()["idle"]
	if w == nil {
		t.Fatal("a worker whose lease found nothing is not in WorkerList")
	}
	wantTime(t, "last_heartbeat_at", w.LastHeartbeatAt, h.now())
}

func testLeaseConcurrent(t *testing.T, h *harness) {
	const n, leasers = 1000, 8
	specs := make([]store.JobSpec, n)
	for i := range specs {
		specs[i] = spec("k", "")
	}
	h.enqueue(specs...)

	owner, dups, errs := leaseConcurrently(h, leasers, 10)
	for _, err := range errs {
		t.Errorf("JobLease: %v", err)
	}
	if len(dups) > 0 {
		t.Errorf("%d jobs delivered twice (or without a fresh token), e.g. %s", len(dups), dups[0])
	}
	if len(owner) != n {
		t.Errorf("delivered %d distinct jobs, want %d", len(owner), n)
	}
	q := h.queue(store.DefaultQueue)
	if q.Counts[store.StateRunning] != n || q.Counts[store.StateAvailable] != 0 {
		t.Errorf("counts after leasing everything = %v, want %d running", q.Counts, n)
	}
}

// leaseConcurrently has leasers goroutines lease max jobs at a time from
// the default queue until it is empty. It returns each delivered job's
// worker, the deliveries that repeated a job or a token, and the errors.
func leaseConcurrently(h *harness, leasers, max int) (owner map[string]string, dups []string, errs []error) {
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		tokens = map[string]bool{}
		start  = make(chan struct{})
	)
	owner = map[string]string{}
	for i := range leasers {
		worker := fmt.Sprintf("w-%d", i)
		wg.Go(func() {
			<-start
			for {
				jobs, err := h.s.JobLease(h.ctx, &store.JobLeaseParams{
					WorkerID: worker, Queues: []string{store.DefaultQueue}, Max: max, Now: h.now(),
				})
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", worker, err))
				}
				for _, j := range jobs {
					if prev, ok := owner[j.ID]; ok || j.Lease == nil || tokens[j.Lease.Token] {
						dups = append(dups, fmt.Sprintf("%s to %s and %s", j.ID, prev, worker))
					} else {
						tokens[j.Lease.Token] = true
					}
					owner[j.ID] = worker
				}
				mu.Unlock()
				if err != nil || len(jobs) == 0 {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	return owner, dups, errs
}
