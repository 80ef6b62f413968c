package storetest

import (
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// The harness's actions: each calls the store at the clock's current time
// and fails the test at once if the store returns an error.

// enqueue enqueues specs in one call and returns the jobs.
func (h *harness) enqueue(specs ...store.JobSpec) []*store.Job {
	h.t.Helper()
	res, err := h.s.JobEnqueue(h.ctx, &store.JobEnqueueParams{Jobs: specs, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobEnqueue: %v", err)
	}
	if len(res.Jobs) != len(specs) {
		h.t.Fatalf("JobEnqueue returned %d jobs for %d specs", len(res.Jobs), len(specs))
	}
	return res.Jobs
}

// enqueueOne enqueues one spec.
func (h *harness) enqueueOne(spec store.JobSpec) *store.Job {
	h.t.Helper()
	return h.enqueue(spec)[0]
}

// lease leases up to max jobs of queues (the default queue when none).
func (h *harness) lease(worker string, max int, queues ...string) []*store.Job {
	h.t.Helper()
	if len(queues) == 0 {
		queues = []string{store.DefaultQueue}
	}
	jobs, err := h.s.JobLease(h.ctx, &store.JobLeaseParams{WorkerID: worker, Queues: queues, Max: max, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobLease(%q): %v", worker, err)
	}
	return jobs
}

// leaseOne leases exactly one job of queues.
func (h *harness) leaseOne(worker string, queues ...string) *store.Job {
	h.t.Helper()
	jobs := h.lease(worker, 1, queues...)
	if len(jobs) != 1 {
		h.t.Fatalf("JobLease(%q) leased %d jobs, want 1", worker, len(jobs))
	}
	return jobs[0]
}

// running enqueues spec and has worker lease it; the spec's queue must hold
// no other available job.
func (h *harness) running(worker string, spec store.JobSpec) *store.Job {
	h.t.Helper()
	j := h.enqueueOne(spec)
	got := h.leaseOne(worker, j.Queue)
	if got.ID != j.ID {
		h.t.Fatalf("leased %s, want the job just enqueued %s", got.ID, j.ID)
	}
	return got
}

// get returns the job with its attempts.
func (h *harness) get(id string) *store.Job {
	h.t.Helper()
	j, err := h.s.JobGet(h.ctx, &store.JobGetParams{ID: id, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobGet(%s): %v", id, err)
	}
	return j
}

// ack acks a running job under its current lease.
func (h *harness) ack(j *store.Job) *store.Job {
	h.t.Helper()
	got, err := h.s.JobAck(h.ctx, &store.JobAckParams{ID: j.ID, Token: token(h.t, j), Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobAck(%s): %v", j.ID, err)
	}
	return got
}

// fail fails a running job under its current lease, retry allowed.
func (h *harness) fail(j *store.Job, msg string) *store.Job {
	h.t.Helper()
	got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(h.t, j), Error: msg, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobFail(%s): %v", j.ID, err)
	}
	return got
}

// failNoRetry fails a running job under its current lease with retry
// false: it is dead at once.
func (h *harness) failNoRetry(j *store.Job) *store.Job {
	h.t.Helper()
	got, err := h.s.JobFail(h.ctx, &store.JobFailParams{ID: j.ID, Token: token(h.t, j), Error: "no", NoRetry: true, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobFail(%s): %v", j.ID, err)
	}
	return got
}

// release gives a running job back after delay.
func (h *harness) release(j *store.Job, delay time.Duration) *store.Job {
	h.t.Helper()
	got, err := h.s.JobRelease(h.ctx, &store.JobReleaseParams{ID: j.ID, Token: token(h.t, j), Delay: delay, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobRelease(%s): %v", j.ID, err)
	}
	return got
}

// cancel cancels a job, or requests cancellation of a running one.
func (h *harness) cancel(id string) *store.Job {
	h.t.Helper()
	got, err := h.s.JobCancel(h.ctx, &store.JobCancelParams{ID: id, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobCancel(%s): %v", id, err)
	}
	return got
}

// promote makes due scheduled jobs available.
func (h *harness) promote() int {
	h.t.Helper()
	n, err := h.s.JobPromote(h.ctx, &store.JobPromoteParams{Limit: 1000, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobPromote: %v", err)
	}
	return n
}

// reap ends running jobs past their expiry.
func (h *harness) reap() []*store.Job {
	h.t.Helper()
	jobs, err := h.s.JobReap(h.ctx, &store.JobReapParams{Limit: 1000, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobReap: %v", err)
	}
	return jobs
}

// orphans lists running jobs whose owner was last heard from before
// deadBefore, owners in live aside.
func (h *harness) orphans(deadBefore time.Time, live ...string) []store.Orphan {
	h.t.Helper()
	got, err := h.s.JobListOrphans(h.ctx, &store.JobListOrphansParams{DeadBefore: deadBefore, LiveIDs: live, Limit: 1000})
	if err != nil {
		h.t.Fatalf("JobListOrphans: %v", err)
	}
	return got
}

// recover rescues orphans as node with the default max rescues.
func (h *harness) recover(node string, orphans []store.Orphan) []*store.Job {
	h.t.Helper()
	return h.recoverMax(node, orphans, 0)
}

func (h *harness) recoverMax(node string, orphans []store.Orphan, maxRescues int) []*store.Job {
	h.t.Helper()
	got, err := h.s.JobRecover(h.ctx, &store.JobRecoverParams{Orphans: orphans, NodeID: node, MaxRescues: maxRescues, Now: h.now()})
	if err != nil {
		h.t.Fatalf("JobRecover: %v", err)
	}
	return got
}

// orphan advances the clock a minute, past dead_after of j's silent owner,
// and returns j's entry in the orphan listing (other orphans are left).
func (h *harness) orphan(j *store.Job) store.Orphan {
	h.t.Helper()
	h.advance(time.Minute)
	for _, o := range h.orphans(h.now().Add(-store.DefaultDeadAfter)) {
		if o.JobID == j.ID {
			return o
		}
	}
	h.t.Fatalf("job %s is not listed as an orphan a minute after its lease", j.ID)
	return store.Orphan{}
}

// heartbeat records a sign of life of worker.
func (h *harness) heartbeat(worker string, inFlight ...string) *store.WorkerHeartbeatResult {
	h.t.Helper()
	res, err := h.s.WorkerHeartbeat(h.ctx, &store.WorkerHeartbeatParams{ID: worker, InFlight: inFlight, Now: h.now()})
	if err != nil {
		h.t.Fatalf("WorkerHeartbeat(%q): %v", worker, err)
	}
	return res
}

// workers lists every worker by id.
func (h *harness) workers() map[string]*store.Worker {
	h.t.Helper()
	list, err := h.s.WorkerList(h.ctx, &store.WorkerListParams{})
	if err != nil {
		h.t.Fatalf("WorkerList: %v", err)
	}
	m := make(map[string]*store.Worker, len(list))
	for _, w := range list {
		m[w.ID] = w
	}
	return m
}

// queue returns the named queue of QueueList.
func (h *harness) queue(name string) *store.Queue {
	h.t.Helper()
	list, err := h.s.QueueList(h.ctx, &store.QueueListParams{Now: h.now()})
	if err != nil {
		h.t.Fatalf("QueueList: %v", err)
	}
	for _, q := range list {
		if q.Name == name {
			return q
		}
	}
	h.t.Fatalf("queue %q not in QueueList", name)
	return nil
}

// token is the current lease token of a running job.
func token(t *testing.T, j *store.Job) string {
	t.Helper()
	if j.Lease == nil {
		t.Fatalf("job %s (%s) has no lease", j.ID, j.State)
	}
	return j.Lease.Token
}

// spec is a job spec of kind in queue (the default queue when empty).
func spec(kind, queue string) store.JobSpec {
	return store.JobSpec{Kind: kind, Queue: queue}
}

func ids(jobs []*store.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }
