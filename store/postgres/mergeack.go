package postgres

import (
	"context"
	"time"

	"github.com/tetherq/tether/store"
)

// ackMerger merges the ack-only settles that arrive while one runs into the
// next statement (see merger).
type ackMerger struct {
	merger[*ackCall]
	before func(calls int) // called before each statement (tests)
}

// ackCall is one caller's acks, at its own instant, and what became of
// them.
type ackCall struct {
	acks []store.JobAckParams
	now  time.Time
	// settled has a flag per ack, true for those that settled a job now
	// (ackMany sets it).
	settled []bool
	err     error
}

// settle acks with the calls merged at the time. A caller that gave up
// already joins no batch: the batch runs on a context of its own, and its
// outcome (an outage, say) is not that caller's to report.
func (g *ackMerger) settle(ctx context.Context, q querier, acks []store.JobAckParams, now time.Time) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &ackCall{acks: acks, now: now}
	g.do(c, func(batch []*ackCall) {
		if g.before != nil {
			g.before(len(batch))
		}
		mctx, cancel := mergedContext(ctx)
		defer cancel()
		err := ackMany(mctx, q, batch)
		for _, b := range batch {
			b.err = err
		}
	})
	return c.settled, c.err
}
