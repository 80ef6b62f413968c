package client

import (
	"context"
	"time"
)

// taskKey finds a handler's task in its ctx.
type taskKey struct{}

func taskOf(ctx context.Context) *task {
	t, _ := ctx.Value(taskKey{}).(*task)
	return t
}

// ReportProgress records pct (clamped to 0..100) as the job's progress. The
// runner sends it with an extend at once, or within 100 ms of the last one.
// It does nothing outside a Runner's handler.
func ReportProgress(ctx context.Context, pct int) {
	t := taskOf(ctx)
	if t == nil {
		return
	}
	pct = min(max(pct, 0), 100)
	t.mu.Lock()
	t.progress = &pct
	t.mu.Unlock()
	t.nudge()
}

// ExtendLease makes d (1 ms..24 h) the length of the job's lease from now
// on: the runner extends it to now + d at once, and every later extend
// asks for d rather than the job's timeout_ms. The runner keeps extending
// while the handler runs either way; d is the silence the job's lease
// outlives if the runner stops answering. It does nothing outside a
// Runner's handler.
func ExtendLease(ctx context.Context, d time.Duration) {
	t := taskOf(ctx)
	if t == nil {
		return
	}
	t.mu.Lock()
	t.length = min(max(d, time.Millisecond), 24*time.Hour)
	t.mu.Unlock()
	t.nudge()
}

// Draining returns a channel closed when the runner begins to stop: no
// more jobs are leased, and the handler has the runner's Grace to finish
// before its ctx ends with ErrShutdown. A handler that gives up then
// should return Snooze(0), which releases its job without spending an
// attempt. Outside a Runner's handler it returns nil (never ready).
func Draining(ctx context.Context) <-chan struct{} {
	if t := taskOf(ctx); t != nil {
		return t.s.draining
	}
	return nil
}

// nudge wakes the task's keeper for an extend; requests made before it
// runs are sent together.
func (t *task) nudge() {
	select {
	case t.poke <- struct{}{}:
	default:
	}
}
