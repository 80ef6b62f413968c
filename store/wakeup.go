package store

import (
	"container/list"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WakeupPollInterval is how often a shared store wakes its waiting leasers
// while its wake-up channel (LISTEN/NOTIFY, pub/sub) is down: often enough
// that a long-poll still sees a new job within half a second, rare enough
// to cost nothing.
const WakeupPollInterval = 500 * time.Millisecond

// Wakeups hands the news that jobs became leasable in a queue to the
// long-polls waiting on that queue: n new jobs wake the n longest-waiting
// leasers of their queue, not every leaser of every queue. Backends call
// Signal after each transition that makes jobs leasable (directly for
// SQLite, from LISTEN/NOTIFY or pub/sub for the shared stores) and hand out
// Waiters from LeaseWakeup. A waiter costs a channel and a list entry per
// queue it names, and no CPU while it waits.
//
// A hand-off can be lost where a herd cannot: a leaser woken for a job may
// give up (its wait ran out, its client left) or lease fewer jobs than
// arrived. So a waiter that was woken and is released without leasing
// again passes its wake-up on (Release), and a leaser whose lease came back
// full wakes one more (Waiter.Relay): the queue may hold more.
type Wakeups struct {
	mu     sync.Mutex
	queues map[string]*list.List // of *Waiter, longest-waiting first
	timers map[string]*timedSignal
}

// timedSignal is a SignalAfter waiting to fire.
type timedSignal struct {
	at    time.Time
	timer *time.Timer
}

// NewWakeups returns a hub with no waiters.
func NewWakeups() *Wakeups {
	return &Wakeups{queues: map[string]*list.List{}, timers: map[string]*timedSignal{}}
}

// Waiter is one long-poll's registration: C closes when jobs may have
// become leasable in one of its queues. Whoever takes a Waiter must either
// lease again once C closed, or call Release.
type Waiter struct {
	w      *Wakeups
	ch     chan struct{}
	queues []string
	elems  []*list.Element
	by     string // the queue whose signal woke it; "" while waiting
}

// C is closed by the wake-up.
func (wt *Waiter) C() <-chan struct{} { return wt.ch }

// Wait registers a waiter on queues. Take it before the lease attempt that
// may find nothing, then wait on C, so that no wake-up falls between the
// two.
func (w *Wakeups) Wait(queues []string) *Waiter {
	wt := &Waiter{w: w, ch: make(chan struct{}), queues: queues, elems: make([]*list.Element, len(queues))}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, q := range queues {
		l := w.queues[q]
		if l == nil {
			l = list.New()
			w.queues[q] = l
		}
		wt.elems[i] = l.PushBack(wt)
	}
	return wt
}

// Signal wakes the n longest-waiting waiters of queue, or all of them when
// n <= 0 (a count the caller does not know: a resumed queue, a message
// from an older replica).
func (w *Wakeups) Signal(queue string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.queues[queue]
	for l != nil && l.Len() > 0 {
		w.wake(l.Front().Value.(*Waiter), queue)
		if n--; n == 0 {
			return
		}
	}
}

// SignalAfter wakes the longest-waiting waiter of queue after d: a rate
// limit that held a job back lets one through only then, and no
// transition of the store will say so. The lease that was throttled knows
// when (store.Gate.WakeAt); on a shared store every replica whose leasers
// wait made such a lease, so each sets its own timer. Timers of a queue
// coalesce: the earliest stands. A woken leaser whose lease comes back
// full relays, and one throttled again sets the next timer.
func (w *Wakeups) SignalAfter(queue string, d time.Duration) {
	at := time.Now().Add(d)
	w.mu.Lock()
	defer w.mu.Unlock()
	if ts := w.timers[queue]; ts != nil {
		if !ts.at.After(at) {
			return
		}
		ts.timer.Stop()
	}
	ts := &timedSignal{at: at}
	ts.timer = time.AfterFunc(d, func() {
		w.mu.Lock()
		if w.timers[queue] == ts {
			delete(w.timers, queue)
		}
		w.mu.Unlock()
		w.Signal(queue, 1)
	})
	w.timers[queue] = ts
}

// SignalAll wakes every waiter: the shared stores' fallback while their
// wake-up channel is down, when no signal names its queue.
func (w *Wakeups) SignalAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for q, l := range w.queues {
		if strings.HasPrefix(q, workerEndedPrefix) {
			continue // no worker ended; its queues wake its polls
		}
		for l.Len() > 0 {
			w.wake(l.Front().Value.(*Waiter), q)
		}
	}
}

// Waiting returns how many waiters wait on queue.
func (w *Wakeups) Waiting(queue string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l := w.queues[queue]; l != nil {
		return l.Len()
	}
	return 0
}

// wake closes wt's channel and takes it off every list; w.mu is held.
func (w *Wakeups) wake(wt *Waiter, by string) {
	w.remove(wt)
	wt.by = by
	close(wt.ch)
}

// remove takes wt off its lists, dropping lists left empty; w.mu is held.
func (w *Wakeups) remove(wt *Waiter) {
	for i, q := range wt.queues {
		if e := wt.elems[i]; e != nil {
			l := w.queues[q]
			l.Remove(e)
			if l.Len() == 0 {
				delete(w.queues, q)
			}
			wt.elems[i] = nil
		}
	}
}

// Release ends a waiter that will not lease again. A waiter woken already
// passes its wake-up on to the next waiter of the queue that woke it: the
// job it was woken for may still be there.
func (wt *Waiter) Release() {
	w := wt.w
	w.mu.Lock()
	by := wt.by
	if by == "" {
		w.remove(wt)
	}
	w.mu.Unlock()
	if by != "" {
		w.Signal(by, 1)
	}
}

// Relay wakes one more waiter of each of the waiter's queues: a leaser
// calls it when its lease came back full, since the queues may hold more
// jobs than the signal that woke it counted.
func (wt *Waiter) Relay() {
	for _, q := range wt.queues {
		wt.w.Signal(q, 1)
	}
}

// WorkerEnded is the wake-up key a worker's deregistration signals, with n
// 0 (every waiter), on every replica: a long-poll of that worker waits on
// it beside its queues and, woken by it, ends without leasing. A queue name
// cannot hold a space (ValidName), so the key names no queue.
func WorkerEnded(worker string) string { return workerEndedPrefix + worker }

const workerEndedPrefix = "worker ended "

// WokenBy returns the key whose signal woke the waiter (a queue or a
// WorkerEnded key), or "" while it waits. Read it once C is closed.
func (wt *Waiter) WokenBy() string {
	wt.w.mu.Lock()
	defer wt.w.mu.Unlock()
	return wt.by
}

// WakeupMessage is how a shared store names a wake-up on its channel: the
// number of jobs that became leasable, a colon, the queue.
func WakeupMessage(queue string, n int) string { return strconv.Itoa(n) + ":" + queue }

// ParseWakeupMessage reads a WakeupMessage. A message without a count (a
// bare queue name, as replicas before this format sent) has n 0: wake every
// waiter of the queue. (During such an upgrade a bare name that itself
// starts with digits and a colon reads as a count and the rest.)
func ParseWakeupMessage(msg string) (queue string, n int) {
	count, q, ok := strings.Cut(msg, ":")
	if !ok {
		return msg, 0
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		return msg, 0 // a queue name holding ':'
	}
	return q, n
}
