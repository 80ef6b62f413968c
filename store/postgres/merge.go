package postgres

import (
	"context"
	"sync"
	"time"
)

// mergedTimeout bounds one merged statement. It runs for several callers,
// so no single caller's context may cancel it.
const mergedTimeout = 30 * time.Second

// merger runs the calls that arrive while one runs together, in the next
// run: one statement and one commit for what several workers ask at once,
// where the per-statement costs (planning, the counts trigger, the
// commit, a round trip) weigh as much as a fifth of a batch of 100. A call
// that finds nothing running runs at once, so a lone worker waits for
// nothing.
type merger[C any] struct {
	mu      sync.Mutex
	busy    bool
	waiting []*mergeWaiter[C]
}

type mergeWaiter[C any] struct {
	call C
	wake chan struct{} // closed once: the call is done, or it runs the next batch
	done bool
}

// do has call run by run, alone or in a batch with others; run sets each
// call's outcome.
func (m *merger[C]) do(call C, run func(batch []C)) {
	w := &mergeWaiter[C]{call: call, wake: make(chan struct{})}
	m.mu.Lock()
	m.waiting = append(m.waiting, w)
	if m.busy {
		m.mu.Unlock()
		<-w.wake
		if w.done {
			return
		}
		m.mu.Lock() // this call runs the next batch; busy stays set
	}
	m.busy = true
	batch := m.waiting
	m.waiting = nil
	m.mu.Unlock()

	calls := make([]C, len(batch))
	for i, b := range batch {
		calls[i] = b.call
	}
	defer m.finish(w, batch) // even if run panics: the others must not wait forever
	run(calls)
}

// finish wakes the calls of batch that w ran, and hands the running slot
// to the first waiting call, if any.
func (m *merger[C]) finish(w *mergeWaiter[C], batch []*mergeWaiter[C]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range batch {
		if b != w {
			b.done = true
			close(b.wake)
		}
	}
	if len(m.waiting) > 0 {
		close(m.waiting[0].wake) // not done: it runs the next batch
	} else {
		m.busy = false
	}
}

// queued is how many calls wait behind a running one.
func (m *merger[C]) queued() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiting)
}

// mergedContext is the context of a merged statement: no caller's
// cancellation, a bound of its own.
func mergedContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), mergedTimeout)
}
