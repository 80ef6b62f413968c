package client

import (
	"context"
	"fmt"
	"time"
)

// leaseLoop long-polls for as many jobs as there are free slots, one poll
// at a time, until ctx ends or the server refuses the runner.
func (s *session) leaseLoop(ctx context.Context) {
	var b backoff
	for {
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		n := 1 + s.moreSlots(maxLease-1)
		jobs, err := s.lease(ctx, n, leaseWait)
		s.freeSlots(n - len(jobs))
		if !s.leased(ctx, jobs, err, &b) {
			return
		}
	}
}

// leaseOne takes at most one job, long-polling until wait has passed (one
// try without waiting when wait is 0).
func (s *session) leaseOne(ctx context.Context, wait time.Duration) {
	deadline := time.Now().Add(wait)
	var b backoff
	for {
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		jobs, err := s.lease(ctx, 1, min(max(time.Until(deadline), 0), leaseWait))
		if len(jobs) == 0 {
			s.freeSlots(1)
		}
		if !s.leased(ctx, jobs, err, &b) || len(jobs) > 0 || time.Until(deadline) <= 0 {
			return
		}
	}
}

// leased starts the jobs a lease brought, or handles its error; false
// means leasing is over.
func (s *session) leased(ctx context.Context, jobs []*Job, err error, b *backoff) bool {
	if err == nil {
		b.reset()
		for _, j := range jobs {
			s.start(ctx, j)
		}
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	if !retryable(err) {
		// A refused token, or a lease the server calls invalid (a bad
		// queue name): retrying the same request cannot help.
		s.fatal(fmt.Errorf("lease: %w", err))
		return false
	}
	d := b.delay(err)
	s.log.Warn("lease failed, retrying", "err", err, "retry_in", d)
	return sleep(ctx, d)
}

func (s *session) lease(ctx context.Context, n int, wait time.Duration) ([]*Job, error) {
	ctx, cancel := context.WithTimeout(ctx, wait+callTimeout)
	defer cancel()
	return s.c.Lease(ctx, LeaseRequest{
		WorkerID: s.id, Queues: s.queues, Kinds: s.kinds, Max: n, WaitMS: int(wait.Milliseconds()),
	})
}

// maxLease is the API's bound on a lease's max, and on a heartbeat's
// in_flight: the most jobs a Runner runs at once.
const maxLease = 1000

// moreSlots takes up to most free slots beyond the first, without waiting.
func (s *session) moreSlots(most int) int {
	n := 0
	for n < most {
		select {
		case s.slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
	return n
}

func (s *session) freeSlots(n int) {
	for range n {
		<-s.slots
	}
}
