package postgres

import (
	"context"
	"errors"

	"github.com/tetherq/tether/store"
)

// mergedJobs is the most jobs a call may carry and still be merged with
// others: single enqueues are the ones that pay a statement and a commit
// per job, and a batch that large pays them once already, so it runs
// alone rather than hold up the singles merged with it.
const mergedJobs = 100

// enqueueMerger merges the enqueues of up to mergedJobs jobs that arrive
// while one runs into the next statement and commit (see merger): 16
// producers sending one job each then cost one insert and one WAL flush
// where they cost 16.
type enqueueMerger struct {
	merger[*enqueueCall]
	before func(calls int) // called before each run (tests)
}

// errAlone tells a merged call to run again alone: its run committed
// nothing, and failed in a way that may be another call's doing (a job the
// database refused) or panicked.
var errAlone = errors.New("enqueue alone")

// enqueueOnce sets c's answer from one run: merged with the calls that
// arrive meanwhile when merge is set, alone otherwise, or again alone when
// the merged run failed for a reason other than an outage or one of c's
// keys. A caller that gave up already joins no run: the run goes on
// without it on a context of its own, and its outcome is not that
// caller's to report.
func (s *Store) enqueueOnce(ctx context.Context, c *enqueueCall, merge bool) {
	if merge {
		c.err = errAlone // what a run that panics before its commit leaves its calls
		s.enqueues.do(c, func(batch []*enqueueCall) { s.enqueueMerged(ctx, batch) })
		if !errors.Is(c.err, errAlone) {
			return
		}
	}
	if err := s.enqueueCalls(ctx, []*enqueueCall{c}); err != nil {
		c.res, c.err = nil, err
	}
}

// enqueueMerged runs the calls of batch whose callers still wait, in one
// run, and sets each one's answer.
func (s *Store) enqueueMerged(ctx context.Context, batch []*enqueueCall) {
	if s.enqueues.before != nil {
		s.enqueues.before(len(batch))
	}
	var live []*enqueueCall
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.res, c.err = nil, err
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	mctx, cancel := mergedContext(ctx)
	defer cancel()
	err := s.enqueueCalls(mctx, live)
	if err == nil {
		return
	}
	// An outage is every call's answer. A key recorded meanwhile sends the
	// calls with keys back to look again, and those without to run alone;
	// anything else may be one call's doing, so each finds out alone.
	for _, c := range live {
		c.res, c.err = nil, err
		switch {
		case len(live) == 1, errors.Is(err, store.ErrUnavailable):
		case errors.Is(err, errKeyTaken):
			if len(c.keys) == 0 {
				c.err = errAlone
			}
		default:
			c.err = errAlone
		}
	}
}
