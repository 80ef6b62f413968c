package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/tetherq/tether/store"
)

// ackGroupTimeout bounds one merged ack statement. It runs for several
// callers, so no single caller's context may cancel it.
const ackGroupTimeout = 30 * time.Second

// ackGroup merges the ack-only settles that arrive while one runs into the
// next statement: one statement and one commit for what several workers
// settle at once, where the per-statement costs (planning, the counts
// trigger, the commit's WAL flush, a round trip) are a fifth of an ack's
// work at batches of 100. A caller that finds no statement running runs
// its own at once, so a lone worker waits for nothing.
type ackGroup struct {
	mu      sync.Mutex
	busy    bool
	waiting []*ackCall
	before  func(calls int) // called by the leader before each statement (tests)
}

// ackCall is one caller's acks, at its own instant, and what became of
// them.
type ackCall struct {
	acks []store.JobAckParams
	now  time.Time
	wake chan struct{} // closed once: the call is done, or it leads the next statement
	done bool
	// settled holds ackKey(id, token) of every ack that settled a job now.
	settled map[string]bool
	err     error
}

// settle acks with the calls merged at the time; see ackGroup.
func (g *ackGroup) settle(ctx context.Context, q querier, acks []store.JobAckParams, now time.Time) (map[string]bool, error) {
	c := &ackCall{acks: acks, now: now, wake: make(chan struct{})}
	g.mu.Lock()
	g.waiting = append(g.waiting, c)
	if g.busy {
		g.mu.Unlock()
		<-c.wake
		if c.done {
			return c.settled, c.err
		}
		g.mu.Lock() // this call leads the next statement; busy stays set
	}
	g.busy = true
	batch := g.waiting
	g.waiting = nil
	before := g.before
	g.mu.Unlock()

	if before != nil {
		before(len(batch))
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackGroupTimeout)
	settled, err := ackMany(sctx, q, batch)
	cancel()

	g.mu.Lock()
	for _, b := range batch {
		b.settled, b.err = settled, err
		if b != c {
			b.done = true
			close(b.wake)
		}
	}
	if len(g.waiting) > 0 {
		close(g.waiting[0].wake) // not done: it leads
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return settled, err
}

// ackKey names one ack in a settled set: an id settles under one token.
func ackKey(id, token string) string { return id + "\x00" + token }
