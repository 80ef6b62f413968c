// Package storetest is the contract suite of store.Store: the single
// definition of behaviour that every backend (SQLite, Postgres, Redis) runs
// against a real server from its own test file:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Every test gets a fresh store and a Clock starting at Base; time only
// moves when a test advances it, so nothing sleeps. When the semantics
// change, this suite changes first.
//
// Where the spec leaves room, the suite pins one reading:
//
//   - A job back in the queue at once after a rescue or a release keeps its
//     run_at (its place); after a fail with retry_in 0 its run_at is the
//     end's Now (store.Decide's RunAt).
//   - Recovery is a compare-and-set on (id, owner, token, running), not on
//     liveness: an owner's heartbeat between the listing and the recovery
//     does not save the job; the worker learns of it in lost.
//   - Shared stores may deliver wake-ups asynchronously (LISTEN/NOTIFY,
//     pub/sub), so the suite waits up to 10 s for one; it checks the absence
//     of a wake-up only on a store where nothing has happened.
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
)

// Base is the instant every test's clock starts at. It has no sub-millisecond
// part, so times survive the millisecond precision of every backend.
var Base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Clock is a manual clock: it stands still until Advance moves it. It is
// safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's current instant.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new instant.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Run runs the whole contract suite. newStore returns a fresh, empty store
// for each test (the backend's test file owns cleanup via t.Cleanup). Tests
// run in parallel, so newStore may be called concurrently and each store it
// returns must be isolated from the others (its own file, database or key
// prefix).
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Enqueue", enqueueTests},
		{"Lease", leaseTests},
		{"Fencing", fencingTests},
		{"Settle", settleTests},
		{"Recover", recoverTests},
		{"Reap", reapTests},
		{"Decisions", decisionTests},
		{"Worker", workerTests},
		{"Cancel", cancelTests},
		{"Manage", manageTests},
		{"Queue", queueTests},
		{"Wakeup", wakeupTests},
		{"Prune", pruneTests},
		{"Bounds", boundTests},
		{"Protocol", protocolTests},
		{"Flow", flowTests},
		{"Schedule", scheduleTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, setup(t, newStore))
				})
			}
		})
	}
}

// test is one contract test; it gets its own store and clock.
type test struct {
	name string
	run  func(t *testing.T, h *harness)
}

// harness is one test's store, clock and context, with helpers that fail
// the test on unexpected errors so the tests read as the scenario.
type harness struct {
	t     *testing.T
	ctx   context.Context
	s     store.Store
	clock *Clock
}

func setup(t *testing.T, newStore func(t *testing.T) store.Store) *harness {
	t.Helper()
	return &harness{t: t, ctx: t.Context(), s: newStore(t), clock: NewClock(Base)}
}

func (h *harness) now() time.Time { return h.clock.Now() }

func (h *harness) advance(d time.Duration) time.Time { return h.clock.Advance(d) }
