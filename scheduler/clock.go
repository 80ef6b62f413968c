package scheduler

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tetherq/tether/store"
)

// ClockSyncInterval is how often a Clock measures its offset again: clocks
// drift by milliseconds per hour, so 30 s is far more often than needed and
// costs one cheap query.
const ClockSyncInterval = 30 * time.Second

// Clock is the local clock corrected to the store's, so replicas with
// skewed clocks agree on leases, heartbeats and run_at. Its Now is what the
// scheduler and the api take as their clock.
type Clock struct {
	store  store.Store
	local  func() time.Time
	offset atomic.Int64 // store − local, in nanoseconds
}

// NewClock returns a clock reading local (time.Now if nil) with no offset
// until Sync or Run measures one.
func NewClock(s store.Store, local func() time.Time) *Clock {
	if local == nil {
		local = time.Now
	}
	return &Clock{store: s, local: local}
}

// Now returns the local time plus the last measured offset.
func (c *Clock) Now() time.Time {
	return c.local().Add(time.Duration(c.offset.Load()))
}

// Offset returns the last measured offset of the store's clock to the local one.
func (c *Clock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// Sync measures the offset once: the store's time minus the local midpoint
// of the round trip, which halves the error a slow answer would add.
func (c *Clock) Sync(ctx context.Context) error {
	before := c.local()
	st, err := c.store.Now(ctx)
	if err != nil {
		return fmt.Errorf("read the store's clock: %w", err)
	}
	after := c.local()
	mid := before.Add(after.Sub(before) / 2)
	c.offset.Store(int64(st.Sub(mid)))
	return nil
}

// Run syncs at once and then every ClockSyncInterval until ctx is done, and
// returns nil then. A failed sync keeps the last offset: the store that did
// not answer fails the scheduler's tick too, which logs it.
func (c *Clock) Run(ctx context.Context) error {
	t := time.NewTicker(ClockSyncInterval)
	defer t.Stop()
	for {
		_ = c.Sync(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
