package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// task is one leased job: its handler's ctx, its lease's upkeep.
type task struct {
	s      *session
	job    *Job
	ctx    context.Context
	cancel context.CancelCauseFunc

	lost       atomic.Bool // the lease was taken: never settle
	ignoreLost atomic.Bool // see session.hold
	poke       chan struct{}

	mu       sync.Mutex
	progress *int          // to send with the next extend
	length   time.Duration // the lease length extends ask for; 0: timeout_ms
}

// start runs the job on a slot the lease loop took for it. A job leased as
// the runner stops is given back at once, its attempt not spent.
func (s *session) start(ctx context.Context, j *Job) {
	if j.Lease == nil {
		// Not a lease answer (a proxy in the way?): nothing to settle with.
		s.log.Error("leased job without a lease token", "job", j.ID)
		<-s.slots
		return
	}
	jctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	t := &task{s: s, job: j, cancel: cancel, poke: make(chan struct{}, 1)}
	t.ctx = context.WithValue(jctx, taskKey{}, t)
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		defer func() { <-s.slots }()
		defer cancel(nil)
		if ctx.Err() != nil {
			s.record(s.settle(t, release(0, nil)))
			return
		}
		s.record(s.runTask(t))
	}()
}

// runTask runs the handler while keeping the lease, then settles.
func (s *session) runTask(t *task) *Outcome {
	s.hold(t)
	// The lease is kept until the handler returns, even once its ctx has
	// ended: a cancelled job's fail still needs the lease to land.
	keepCtx, stopKeeping := context.WithCancel(context.WithoutCancel(t.ctx))
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		t.keep(keepCtx)
	}()
	res, err := s.call(t)
	stopKeeping()
	<-kept
	s.unhold(t)
	t.flushProgress()
	if t.lost.Load() {
		s.log.Warn("job lost: its lease was taken, not settling it", "job", t.job.ID, "kind", t.job.Kind, "err", err)
		return &Outcome{Job: t.job, End: EndLost, Err: err}
	}
	return s.settle(t, decide(t, res, err))
}

// call runs the handler, turning a panic into an error.
func (s *session) call(t *task) (res json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "job", t.job.ID, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	return s.h(t.ctx, t.job)
}

func (t *task) markLost() {
	t.lost.Store(true)
	t.cancel(ErrLeaseLost)
}

// keep extends the lease every third of its length, and at once when the
// handler reports progress or asks for a new length, until ctx ends. A
// 409 or 404 means the lease is lost.
func (t *task) keep(ctx context.Context) {
	timer := time.NewTimer(t.pace())
	defer timer.Stop()
	var b backoff
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-t.poke:
			// At most one extend per minExtendGap for the handler's
			// requests: a child printing progress in a loop must not
			// become a loop of requests.
			if wait := minExtendGap - time.Since(last); wait > 0 {
				timer.Reset(wait)
				continue
			}
		}
		last = time.Now()
		ext, err := t.extend(ctx)
		switch {
		case err == nil:
			b.reset()
			if ext.CancelRequested {
				t.cancel(ErrCancelRequested)
			}
			timer.Reset(t.pace())
		case ctx.Err() != nil:
			return
		case isLost(err):
			t.markLost()
			return
		default:
			if refused(err) {
				t.s.fatal(fmt.Errorf("extend job %s: %w", t.job.ID, err))
			}
			d := b.delay(err)
			t.s.log.Warn("extend failed, retrying", "job", t.job.ID, "err", err, "retry_in", d)
			timer.Reset(d)
		}
	}
}

// flushProgress sends progress reported too late for the keeper, so the
// job shows the last progress its handler reported. One try: the settle
// that follows matters more.
func (t *task) flushProgress() {
	t.mu.Lock()
	pending := t.progress != nil
	t.mu.Unlock()
	if pending && !t.lost.Load() {
		_, _ = t.extend(context.WithoutCancel(t.ctx))
	}
}

// minExtendGap is the least time between two extends of a job.
const minExtendGap = 100 * time.Millisecond

// pace is the time from one extend to the next: a third of the lease, so
// two may fail before it runs out.
func (t *task) pace() time.Duration {
	t.mu.Lock()
	length := t.length
	t.mu.Unlock()
	if length == 0 {
		length = time.Duration(t.job.TimeoutMS) * time.Millisecond
	}
	if length <= 0 {
		length = 30 * time.Minute // the server's default timeout_ms
	}
	return max(length/3, minExtendGap)
}

// extend sends one extend with the progress not yet sent, which it keeps
// for the next try when this one fails.
func (t *task) extend(ctx context.Context) (*Extended, error) {
	t.mu.Lock()
	p, length := t.progress, t.length
	t.progress = nil
	t.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ext, err := t.s.c.Extend(cctx, t.job.ID, t.job.Lease.Token, length.Milliseconds(), p)
	if err != nil {
		t.mu.Lock()
		if t.progress == nil {
			t.progress = p
		}
		t.mu.Unlock()
	}
	return ext, err
}

// isLost reports whether a call's error says the delivery is no longer
// this worker's: 409 lease_lost, or 404 (the job is gone).
func isLost(err error) bool {
	return errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrNotFound)
}
