package store

import (
	"sync"
	"time"
)

// WakeupPollInterval is how often a shared store wakes its waiting leasers
// while its wake-up channel (LISTEN/NOTIFY, pub/sub) is down: often enough
// that a long-poll still sees a new job within half a second, rare enough
// to cost nothing.
const WakeupPollInterval = 500 * time.Millisecond

// Hub is an in-process wake-up signal for long-polling leasers. Backends
// call Signal after every transition that makes jobs leasable (directly for
// SQLite, from LISTEN/NOTIFY or pub/sub for the shared stores) and hand out
// its channels from LeaseWakeup.
//
// One generation channel serves every queue: a waiter woken for a queue it
// does not read simply leases nothing and waits again, which is cheaper than
// a channel per queue per waiter.
type Hub struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewHub returns a hub with no waiters.
func NewHub() *Hub { return &Hub{ch: make(chan struct{})} }

// Wait returns a channel closed by the next Signal.
func (h *Hub) Wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ch
}

// Signal wakes every current waiter.
func (h *Hub) Signal() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.ch)
	h.ch = make(chan struct{})
}
