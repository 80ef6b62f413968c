package storetest

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// flowTests check flow control: per-queue concurrency caps and rate
// limits, per-key ones by a job's concurrency_key, and the wake-ups of
// freed slots and refilled buckets.
var flowTests = []test{
	{"KeyKept", testFlowKeyKept},
	{"LimitsKept", testFlowLimitsKept},
	{"Concurrency", testFlowConcurrency},
	{"RunningBeforeLimits", testFlowRunningBeforeLimits},
	{"KeyConcurrency", testFlowKeyConcurrency},
	{"Rate", testFlowRate},
	{"KeyRate", testFlowKeyRate},
	{"MixedLease", testFlowMixedLease},
	{"RateWakes", testFlowRateWakes},
	{"ConcurrentLeasers", testFlowConcurrentLeasers},
	{"KeyRateSurvivesPrune", testFlowKeyRateSurvivesPrune},
}

// testFlowKeyKept: a job's concurrency key is stored as given and read
// back by every read, across lease, fail, release and retry, from a single
// and a batch enqueue; a job without one has none.
func testFlowKeyKept(t *testing.T, h *harness) {
	key := "tenant-1:ü"
	jobs := h.enqueue(store.JobSpec{Kind: "k", Queue: "q", ConcurrencyKey: &key}, spec("k", "q2"),
		store.JobSpec{Kind: "k", Queue: "q2", ConcurrencyKey: ptr("other")})
	j := jobs[0]
	check := func(when string, got *store.Job) {
		t.Helper()
		if got.ConcurrencyKey == nil || *got.ConcurrencyKey != key {
			t.Errorf("%s: concurrency key %v, want %q", when, got.ConcurrencyKey, key)
		}
	}
	check("enqueue", j)
	check("get", h.get(j.ID))
	l := h.leaseOne("w", "q")
	check("lease", l)
	check("fail", h.fail(l, "x"))
	h.advance(time.Hour)
	h.promote()
	l = h.leaseOne("w", "q")
	check("release", h.release(l, time.Hour))
	h.cancel(j.ID)
	got, err := h.retry(j.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("retry", got)
	if p := h.get(jobs[1].ID); p.ConcurrencyKey != nil {
		t.Errorf("a job enqueued without a key reads %q", *p.ConcurrencyKey)
	}
	if o := h.get(jobs[2].ID); o.ConcurrencyKey == nil || *o.ConcurrencyKey != "other" {
		t.Errorf("the third job of the batch reads key %v, want other", o.ConcurrencyKey)
	}
}

// limit sets queue's limits.
func (h *harness) limit(queue string, l *store.Limits) *store.Queue {
	h.t.Helper()
	q, err := h.s.QueueSetLimits(h.ctx, &store.QueueSetLimitsParams{Name: queue, Limits: l, Now: h.now()})
	if err != nil {
		h.t.Fatalf("QueueSetLimits(%q): %v", queue, err)
	}
	return q
}

// runningIn counts the running jobs of queue, read from the jobs
// themselves.
func (h *harness) runningIn(queue string) int {
	h.t.Helper()
	jobs, err := h.s.JobList(h.ctx, &store.JobListParams{Queue: queue, State: store.StateRunning, Limit: 1000, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobList: %v", err)
	}
	return len(jobs)
}

// wantUntouched checks that jobs held back by a limit are as enqueued:
// available, attempt 0.
func (h *harness) wantUntouched(queue string) {
	h.t.Helper()
	jobs, err := h.s.JobList(h.ctx, &store.JobListParams{Queue: queue, State: store.StateAvailable, Limit: 1000, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobList: %v", err)
	}
	for _, j := range jobs {
		if j.Attempt != 0 || j.Lease != nil {
			h.t.Errorf("held-back job %s: attempt %d, lease %v; want attempt 0, no lease", j.ID, j.Attempt, j.Lease)
		}
	}
}

func keyed(queue, key string) store.JobSpec {
	return store.JobSpec{Kind: "k", Queue: queue, ConcurrencyKey: &key}
}

// testFlowLimitsKept: limits set on a queue without jobs create it and read
// back from QueueList and the answer; clearing them leaves none.
func testFlowLimitsKept(t *testing.T, h *harness) {
	l := &store.Limits{Concurrency: ptr(3), Rate: &store.Rate{Limit: 5, Period: time.Second, Burst: 2},
		KeyConcurrency: ptr(1), KeyRate: &store.Rate{Limit: 100, Period: time.Minute}}
	q := h.limit("q", l)
	if !reflect.DeepEqual(q.Limits, l) {
		t.Errorf("answer: limits %+v, want %+v", q.Limits, l)
	}
	if got := h.queue("q").Limits; !reflect.DeepEqual(got, l) {
		t.Errorf("QueueList: limits %+v, want %+v", got, l)
	}
	h.limit("q", &store.Limits{Concurrency: ptr(7)})
	if got := h.queue("q").Limits; got == nil || got.Concurrency == nil || *got.Concurrency != 7 || got.Rate != nil {
		t.Errorf("replaced: limits %+v, want concurrency 7 only", got)
	}
	if q := h.limit("q", nil); q.Limits != nil {
		t.Errorf("cleared: answer has limits %+v", q.Limits)
	}
	list, err := h.s.QueueList(h.ctx, &store.QueueListParams{Now: h.now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range list {
		if q.Limits != nil {
			t.Errorf("cleared: queue %q lists limits %+v", q.Name, q.Limits)
		}
	}
}

// testFlowConcurrency: a lease takes no more than the room under the cap,
// leaving the rest untouched; each way a delivery ends (ack, settle, fail,
// release) frees its slot; lowering the cap stops nothing.
func testFlowConcurrency(t *testing.T, h *harness) {
	h.limit("q", &store.Limits{Concurrency: ptr(2)})
	for range 6 {
		h.enqueueOne(spec("k", "q"))
	}
	got := h.lease("w", 10, "q")
	if len(got) != 2 {
		t.Fatalf("leased %d jobs under a cap of 2, want 2", len(got))
	}
	h.wantUntouched("q")
	if n := len(h.lease("w", 10, "q")); n != 0 {
		t.Fatalf("leased %d more with the cap full", n)
	}
	h.ack(got[0])
	next := h.lease("w", 10, "q")
	if len(next) != 1 {
		t.Fatalf("after an ack leased %d, want 1", len(next))
	}
	errs, err := h.s.JobSettle(h.ctx, &store.JobSettleParams{Acks: []store.JobAckParams{{ID: next[0].ID, Token: token(t, next[0]), Now: h.now()}}, Now: h.now()})
	if err != nil || errs[0] != nil {
		t.Fatalf("settle: %v %v", err, errs)
	}
	next = h.lease("w", 10, "q")
	if len(next) != 1 {
		t.Fatalf("after a settled ack leased %d, want 1", len(next))
	}
	h.fail(next[0], "boom")
	next = h.lease("w", 10, "q")
	if len(next) != 1 {
		t.Fatalf("after a fail leased %d, want 1", len(next))
	}
	h.release(next[0], 0)
	next = h.lease("w", 10, "q")
	if len(next) != 1 {
		t.Fatalf("after a release leased %d, want 1", len(next))
	}
	h.limit("q", &store.Limits{Concurrency: ptr(1)})
	if n := h.runningIn("q"); n != 2 {
		t.Errorf("lowering the cap left %d running, want 2", n)
	}
	h.ack(next[0])
	if n := len(h.lease("w", 10, "q")); n != 0 {
		t.Errorf("leased %d with 1 running under a cap of 1", n)
	}
	if q := h.queue("q"); q.Throttled[store.ThrottleConcurrency] == 0 {
		t.Errorf("throttle counts %v, want concurrency counted", q.Throttled)
	}
}

// testFlowRunningBeforeLimits: jobs running when limits are set count
// toward them.
func testFlowRunningBeforeLimits(t *testing.T, h *harness) {
	for range 4 {
		h.enqueueOne(spec("k", "q"))
	}
	held := h.lease("w", 2, "q")
	h.limit("q", &store.Limits{Concurrency: ptr(2)})
	if n := len(h.lease("w", 10, "q")); n != 0 {
		t.Fatalf("leased %d with 2 running from before, cap 2", n)
	}
	h.ack(held[0])
	if n := len(h.lease("w", 10, "q")); n != 1 {
		t.Errorf("leased %d after an ack, want 1", n)
	}
}

// testFlowKeyConcurrency: one key at its cap holds back only its own jobs;
// jobs of other keys and without a key behind them still lease, in order.
func testFlowKeyConcurrency(t *testing.T, h *harness) {
	h.limit("q", &store.Limits{KeyConcurrency: ptr(1)})
	var jobs []*store.Job
	for _, s := range []store.JobSpec{keyed("q", "a"), keyed("q", "a"), keyed("q", "a"), keyed("q", "b"),
		spec("k", "q"), keyed("q", "a"), keyed("q", "c")} {
		jobs = append(jobs, h.enqueueOne(s))
		h.advance(time.Millisecond)
	}
	got := h.lease("w", 10, "q")
	want := []string{jobs[0].ID, jobs[3].ID, jobs[4].ID, jobs[6].ID}
	if !reflect.DeepEqual(ids(got), want) {
		t.Fatalf("leased %v, want the first of a, b, the unkeyed one and c: %v", ids(got), want)
	}
	h.wantUntouched("q")
	if n := len(h.lease("w", 10, "q")); n != 0 {
		t.Fatalf("leased %d more with every key at its cap", n)
	}
	h.ack(got[0])
	if next := h.lease("w", 10, "q"); len(next) != 1 || next[0].ID != jobs[1].ID {
		t.Errorf("after key a's ack leased %v, want a's next %s", ids(next), jobs[1].ID)
	}
	if q := h.queue("q"); q.Throttled[store.ThrottleKeyConcurrency] == 0 {
		t.Errorf("throttle counts %v, want key_concurrency counted", q.Throttled)
	}
}

// testFlowRate: at most limit + burst starts per period on the store's
// clock, re-leases included.
func testFlowRate(t *testing.T, h *harness) {
	h.limit("q", &store.Limits{Rate: &store.Rate{Limit: 2, Period: time.Second, Burst: 1}})
	for range 10 {
		h.enqueueOne(spec("k", "q"))
	}
	got := h.lease("w", 10, "q")
	if len(got) != 2 { // a full bucket: burst + 1 at once
		t.Fatalf("leased %d from a full bucket, want 2", len(got))
	}
	h.wantUntouched("q")
	h.release(got[0], 0)
	h.advance(499 * time.Millisecond)
	if n := len(h.lease("w", 10, "q")); n != 0 {
		t.Fatalf("leased %d before the bucket refilled", n)
	}
	h.advance(time.Millisecond)
	if n := len(h.lease("w", 10, "q")); n != 1 {
		t.Fatalf("leased %d once one start refilled, want 1", n)
	}
	h.advance(10 * time.Second)
	if n := len(h.lease("w", 10, "q")); n != 2 {
		t.Fatalf("leased %d after a long pause, want burst + 1 = 2", n)
	}
	if q := h.queue("q"); q.Throttled[store.ThrottleRate] == 0 {
		t.Errorf("throttle counts %v, want rate counted", q.Throttled)
	}
}

// testFlowKeyRate: each key has its own bucket.
func testFlowKeyRate(t *testing.T, h *harness) {
	h.limit("q", &store.Limits{KeyRate: &store.Rate{Limit: 1, Period: time.Minute}})
	var jobs []*store.Job
	for _, s := range []store.JobSpec{keyed("q", "a"), keyed("q", "a"), keyed("q", "b"), keyed("q", "b")} {
		jobs = append(jobs, h.enqueueOne(s))
		h.advance(time.Millisecond)
	}
	got := h.lease("w", 10, "q")
	if want := []string{jobs[0].ID, jobs[2].ID}; !reflect.DeepEqual(ids(got), want) {
		t.Fatalf("leased %v, want one of each key %v", ids(got), want)
	}
	h.ack(got[0])
	if n := len(h.lease("w", 10, "q")); n != 0 {
		t.Fatalf("leased %d within the keys' minute", n)
	}
	h.advance(time.Minute)
	if n := len(h.lease("w", 10, "q")); n != 2 {
		t.Errorf("leased %d a minute later, want 2", n)
	}
	if q := h.queue("q"); q.Throttled[store.ThrottleKeyRate] == 0 {
		t.Errorf("throttle counts %v, want key_rate counted", q.Throttled)
	}
}

// testFlowMixedLease: a lease naming a limited and an unlimited queue
// takes what the limit lets through and fills the rest elsewhere.
func testFlowMixedLease(t *testing.T, h *harness) {
	h.limit("lim", &store.Limits{Concurrency: ptr(1)})
	for range 3 {
		h.enqueueOne(spec("k", "lim"))
		h.enqueueOne(spec("k", "free"))
	}
	got := h.lease("w", 4, "lim", "free")
	n := map[string]int{}
	for _, j := range got {
		n[j.Queue]++
	}
	if n["lim"] != 1 || n["free"] != 3 {
		t.Errorf("leased %v by queue, want lim 1, free 3", n)
	}
}

// testFlowRateWakes: a lease the rate held back sets a wake-up for when
// the bucket refills; nothing else would wake a waiting leaser.
func testFlowRateWakes(t *testing.T, h *harness) {
	h.limit("q", &store.Limits{Rate: &store.Rate{Limit: 1, Period: 50 * time.Millisecond}})
	h.enqueueOne(spec("k", "q"))
	h.enqueueOne(spec("k", "q"))
	w := h.s.LeaseWakeup([]string{"q"})
	if n := len(h.lease("w", 10, "q")); n != 1 {
		t.Fatalf("leased %d, want 1", n)
	}
	wantWoken(t, "a refilled bucket", w.C())
}

// slotEndings each end the delivery of j, which holds the only slot of
// its queue, by one path.
var slotEndings = []struct {
	name string
	end  func(h *harness, j *store.Job)
}{
	{"Ack", func(h *harness, j *store.Job) { h.ack(j) }},
	{"Settle", func(h *harness, j *store.Job) {
		h.settleFails(store.JobFailParams{ID: j.ID, Token: token(h.t, j), Error: "x", Now: h.now()})
	}},
	{"Fail", func(h *harness, j *store.Job) { h.fail(j, "x") }},
	{"ReleaseLater", func(h *harness, j *store.Job) { h.release(j, time.Hour) }},
	{"Reap", func(h *harness, j *store.Job) {
		h.advance(j.Timeout + time.Second)
		if n := len(h.reap()); n != 1 {
			h.t.Fatalf("reaped %d, want 1", n)
		}
	}},
	{"Rescue", func(h *harness, j *store.Job) { h.recover("node-1", []store.Orphan{h.orphan(j)}) }},
	{"Deregister", func(h *harness, j *store.Job) {
		if err := h.s.WorkerDeregister(h.ctx, &store.WorkerDeregisterParams{ID: "w", Now: h.now()}); err != nil {
			h.t.Fatal(err)
		}
	}},
}

func init() {
	for _, e := range slotEndings {
		flowTests = append(flowTests, test{"FreedSlotWakes" + e.name, func(t *testing.T, h *harness) {
			h.limit("q", &store.Limits{Concurrency: ptr(1)})
			held := h.enqueueOne(spec("k", "q"))
			waiting := h.enqueueOne(spec("k", "q"))
			j := h.leaseOne("w", "q")
			if j.ID != held.ID {
				t.Fatalf("leased %s, want %s", j.ID, held.ID)
			}
			w := h.s.LeaseWakeup([]string{"q"})
			if n := len(h.lease("w-2", 1, "q")); n != 0 {
				t.Fatalf("leased %d with the only slot held", n)
			}
			e.end(h, j)
			wantWoken(t, e.name, w.C())
			// A rescued or deregistered job is back in its place, first.
			if got := h.lease("w-2", 1, "q"); len(got) != 1 {
				t.Errorf("after the wake-up leased %v, want one of %s, %s", ids(got), held.ID, waiting.ID)
			}
		}})
	}
}

// testFlowConcurrentLeasers: leasers at once on one store never hold more
// than the cap, checked after every lease by counting running jobs, and
// between them they work the queue off.
func testFlowConcurrentLeasers(t *testing.T, h *harness) {
	const capN, leasers, jobs = 3, 8, 40
	h.limit("q", &store.Limits{Concurrency: ptr(capN)})
	specs := make([]store.JobSpec, jobs)
	for i := range specs {
		specs[i] = spec("k", "q")
	}
	h.enqueue(specs...)
	FlowRace(t, []store.Store{h.s}, h.clock.Now, "q", capN, leasers, jobs)
}

// FlowRace has leasers on each of stores (which share one database) lease
// from queue, capped at capN, until total jobs are done: after every lease
// it counts the running jobs, which must never exceed the cap, and then
// acks what it got. Backends run it across stores of their own.
func FlowRace(t *testing.T, stores []store.Store, now func() time.Time, queue string, capN, leasers, total int) {
	t.Helper()
	ctx := t.Context()
	var (
		mu   sync.Mutex
		done int
		peak int
		wg   sync.WaitGroup
	)
	finished := func() bool { mu.Lock(); defer mu.Unlock(); return done >= total }
	for si, s := range stores {
		for l := range leasers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				worker := fmt.Sprintf("w-%d-%d", si, l)
				for !finished() && ctx.Err() == nil {
					got, err := s.JobLease(ctx, &store.JobLeaseParams{WorkerID: worker, Queues: []string{queue}, Max: 2, Now: now()})
					if err != nil {
						t.Errorf("lease: %v", err)
						return
					}
					if len(got) == 0 {
						runtime.Gosched()
						continue
					}
					running, err := s.JobList(ctx, &store.JobListParams{Queue: queue, State: store.StateRunning, Limit: 1000, Now: now()})
					if err != nil {
						t.Errorf("list: %v", err)
						return
					}
					mu.Lock()
					peak = max(peak, len(running))
					done += len(got)
					mu.Unlock()
					for _, j := range got {
						if _, err := s.JobAck(ctx, &store.JobAckParams{ID: j.ID, Token: j.Lease.Token, Now: now()}); err != nil {
							t.Errorf("ack: %v", err)
							return
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	if peak > capN {
		t.Errorf("%d jobs running at once under a cap of %d", peak, capN)
	}
	if done != total {
		t.Errorf("leased %d jobs in all, want %d", done, total)
	}
}

// testFlowKeyRateSurvivesPrune: KeyPrune drops only key rate states whose
// bucket is full again, never one that still holds a key back.
func testFlowKeyRateSurvivesPrune(t *testing.T, h *harness) {
	h.limit("q", &store.Limits{KeyRate: &store.Rate{Limit: 1, Period: time.Hour}})
	h.enqueue(keyed("q", "a"), keyed("q", "a"))
	h.leaseOne("w", "q")
	h.advance(30 * time.Minute)
	if _, err := h.s.KeyPrune(h.ctx, &store.KeyPruneParams{Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.lease("w", 10, "q")); n != 0 {
		t.Fatalf("leased %d of key a within its hour, after a prune", n)
	}
	h.advance(time.Hour)
	if _, err := h.s.KeyPrune(h.ctx, &store.KeyPruneParams{Now: h.now()}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.lease("w", 10, "q")); n != 1 {
		t.Errorf("leased %d of key a once its hour passed and its state was pruned, want 1", n)
	}
}
