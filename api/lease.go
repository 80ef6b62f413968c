package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tetherq/tether/store"
)

type leaseRequest struct {
	WorkerID *string  `json:"worker_id"`
	Queues   []string `json:"queues"`
	Max      *int     `json:"max"`
	WaitMS   *int64   `json:"wait_ms"`
	Kinds    []string `json:"kinds"`
}

func (req *leaseRequest) check() error {
	return firstErr(
		required("worker_id", req.WorkerID),
		checkOptional(req.WorkerID, func(v string) error { return checkWorkerID("worker_id", v) }),
		checkNames("queues", req.Queues, true),
		checkRange("max", req.Max, 1, maxLeaseMax),
		checkRange("wait_ms", req.WaitMS, 0, maxWaitMS),
		checkNames("kinds", req.Kinds, false),
	)
}

// lease handles POST /v1/lease: up to max jobs, waiting up to wait_ms for
// one to arrive. It answers {"jobs": []} when none came in time, and at
// once on shutdown. A worker id with MaxPollsPerWorker long-polls already
// waiting, or a token with MaxPollsPerToken, gets 429 rate_limited
// (Retry-After: 1) for one more, rather than an empty answer at once, which
// a looping client would turn into a busy loop of store writes.
func (a *API) lease(w http.ResponseWriter, r *http.Request) {
	var req leaseRequest
	if !a.decode(w, r, &req) {
		return
	}
	p := &store.JobLeaseParams{WorkerID: *req.WorkerID, Queues: req.Queues, Kinds: req.Kinds, Max: 1}
	setIf(&p.Max, req.Max)
	var wait time.Duration
	if req.WaitMS != nil {
		wait = millis(*req.WaitMS)
	}
	var ended <-chan struct{} // closed when the worker deregisters
	if wait > 0 {
		var ok bool
		if ended, ok = a.polls.acquire(p.WorkerID); !ok {
			tooMany(w, time.Second, fmt.Sprintf("worker %q already has %d long-polls waiting", p.WorkerID, a.polls.max))
			return
		}
		defer a.polls.release(p.WorkerID)
		if c := a.credentialOf(r); c != nil {
			if _, ok := a.tokenPolls.acquire(c.key); !ok {
				tooMany(w, time.Second, fmt.Sprintf("this token already has %d long-polls waiting", a.tokenPolls.max))
				return
			}
			defer a.tokenPolls.release(c.key)
		}
		liftDeadlines(w, wait)
	}
	jobs, err := a.leaseWait(r.Context(), p, wait, ended)
	if err != nil {
		if r.Context().Err() == nil {
			a.fail(w, r, err)
		}
		return
	}
	a.metrics.leased.Add(float64(len(jobs)))
	writeJobs(w, http.StatusOK, jobs, a.now(), newLeasedJobView)
}

// leaseWait leases until it gets jobs, wait runs out, shutdown begins, the
// worker deregisters (ended) or ctx ends. It registers its waiter before each attempt, so an enqueue
// landing between an empty attempt and the wait is never missed, and it
// never polls: between attempts it sleeps until a wake-up for one of its
// queues. A waiter it leaves without leasing again passes a wake-up it got
// on, and a full lease wakes one more waiter: the queues may hold more.
func (a *API) leaseWait(ctx context.Context, p *store.JobLeaseParams, wait time.Duration, ended <-chan struct{}) ([]*store.Job, error) {
	if wait == 0 {
		p.Now = a.now()
		return a.store.JobLease(ctx, p)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	// Besides its queues, the poll waits on its worker's deregistration
	// made through any replica (store.WorkerEnded).
	endedKey := store.WorkerEnded(p.WorkerID)
	keys := append(slices.Clip(p.Queues), endedKey)
	for {
		w := a.store.LeaseWakeup(keys)
		p.Now = a.now()
		jobs, err := a.store.JobLease(ctx, p)
		if err != nil || len(jobs) > 0 {
			w.Release()
			if len(jobs) == p.Max {
				w.Relay()
			}
			return jobs, err
		}
		a.waiting.Add(1)
		select {
		case <-w.C(): // spent: the next attempt is its lease
			a.waiting.Add(-1)
			if w.WokenBy() == endedKey {
				// Every waiter of the key was woken: nothing to pass on
				// (Release would wake a poll the worker made since).
				return nil, nil
			}
			continue
		case <-timer.C:
			err = nil
		case <-a.cfg.Shutdown:
			err = nil
		case <-ended:
			err = nil
		case <-ctx.Done():
			err = ctx.Err()
		}
		a.waiting.Add(-1)
		w.Release()
		return nil, err
	}
}

// deadlineSlack is the time a long-poll gets beyond its wait to answer.
const deadlineSlack = 10 * time.Second

// liftDeadlines moves the connection's read and write deadlines (the
// server's ReadTimeout and WriteTimeout) past a long-poll's wait. The read
// deadline matters too: once it passes, net/http cancels the request's
// context. A writer without deadlines (a test recorder) is left as is.
func liftDeadlines(w http.ResponseWriter, wait time.Duration) {
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(wait + deadlineSlack)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
}

// pollCount counts the long-polls waiting per key (a worker id, a token),
// up to max each, and can end every poll of a key at once.
type pollCount struct {
	mu  sync.Mutex
	max int
	n   map[string]int
	// ended is closed to end the polls of a key (a deregistered worker's).
	ended map[string]chan struct{}
}

func newPollCount(max int) *pollCount {
	return &pollCount{max: max, n: map[string]int{}, ended: map[string]chan struct{}{}}
}

// acquire takes a slot for key and returns the channel that ends its
// polls, or reports false when all slots are taken.
func (c *pollCount) acquire(key string) (<-chan struct{}, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key] >= c.max {
		return nil, false
	}
	c.n[key]++
	ch := c.ended[key]
	if ch == nil {
		ch = make(chan struct{})
		c.ended[key] = ch
	}
	return ch, true
}

func (c *pollCount) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key]--; c.n[key] <= 0 {
		delete(c.n, key)
		delete(c.ended, key)
	}
}

// end answers every poll of key waiting now; later ones wait as before.
func (c *pollCount) end(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.ended[key]; ch != nil {
		close(ch)
		delete(c.ended, key)
	}
}

type extendRequest struct {
	Token    *string `json:"token"`
	ExtendMS *int64  `json:"extend_ms"`
	Progress *int    `json:"progress"`
}

func (req *extendRequest) check() error {
	return firstErr(
		checkToken("token", req.Token),
		checkRange("extend_ms", req.ExtendMS, 1, maxTimeoutMS),
		checkRange("progress", req.Progress, 0, 100),
	)
}

type extendView struct {
	ExpiresAt       stamp `json:"expires_at"`
	CancelRequested bool  `json:"cancel_requested"`
}

// extend handles POST /v1/jobs/{id}/extend: the lease runs until now +
// (extend_ms or the job's timeout); the answer tells the worker whether
// cancellation was requested. Returns 409 lease_lost for a stale token.
func (a *API) extend(w http.ResponseWriter, r *http.Request) {
	now, id := a.now(), pathParam(r, "id")
	var req extendRequest
	if !a.decode(w, r, &req) {
		return
	}
	p := &store.JobExtendParams{ID: id, Token: *req.Token, Progress: req.Progress, Now: now}
	if req.ExtendMS != nil {
		p.Extend = millis(*req.ExtendMS)
	}
	job, err := a.store.JobExtend(r.Context(), p)
	if err != nil {
		a.fail(w, r, err, aboutJob(id))
		return
	}
	v := extendView{CancelRequested: job.CancelRequested}
	if job.Lease != nil {
		v.ExpiresAt = stamp(job.Lease.ExpiresAt)
	}
	writeJSON(w, http.StatusOK, v)
}

type releaseRequest struct {
	Token   *string `json:"token"`
	DelayMS *int64  `json:"delay_ms"`
}

func (req *releaseRequest) check() error {
	return firstErr(checkToken("token", req.Token), checkRange("delay_ms", req.DelayMS, 0, maxDelayMS))
}

// release handles POST /v1/jobs/{id}/release: the job goes back, available
// or scheduled after delay_ms, with attempt − 1. Returns 409 lease_lost for
// a stale token.
func (a *API) release(w http.ResponseWriter, r *http.Request) {
	now, id := a.now(), pathParam(r, "id")
	var req releaseRequest
	if !a.decode(w, r, &req) {
		return
	}
	p := &store.JobReleaseParams{ID: id, Token: *req.Token, Now: now}
	if req.DelayMS != nil {
		p.Delay = millis(*req.DelayMS)
	}
	job, err := a.store.JobRelease(r.Context(), p)
	a.answerJob(w, r, id, job, err, now)
}
