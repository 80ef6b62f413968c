package scheduler

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestClockOffset(t *testing.T) {
	t.Parallel()
	f := newFakeStore()
	// The local clock reads 100 ms further at every call, so the store's
	// answer falls at the midpoint of the two reads around it.
	local := t0
	tick := func() time.Time { local = local.Add(100 * time.Millisecond); return local }
	f.clock = t0.Add(5*time.Second + 250*time.Millisecond) // reads at +200 and +300 ms

	c := NewClock(f, tick)
	if got := c.Now(); !got.Equal(t0.Add(100 * time.Millisecond)) {
		t.Errorf("Now before Sync = %v, want the local clock", got)
	}
	if err := c.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Offset(); got != 5*time.Second {
		t.Errorf("Offset = %v, want 5s", got)
	}
	if got, want := c.Now(), t0.Add(400*time.Millisecond+5*time.Second); !got.Equal(want) {
		t.Errorf("Now = %v, want %v", got, want)
	}
}

func TestClockKeepsOffsetOnError(t *testing.T) {
	t.Parallel()
	f := newFakeStore()
	f.clock = time.Now().Add(time.Hour)
	c := NewClock(f, nil)
	if err := c.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.fail["Now"] = errors.New("gone")
	if err := c.Sync(t.Context()); err == nil {
		t.Error("Sync against a failing store: no error")
	}
	if d := c.Offset(); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("Offset after a failed sync = %v, want about 1h", d)
	}
}

func TestClockRunSyncsAndStops(t *testing.T) {
	t.Parallel()
	f := newFakeStore()
	f.clock = time.Now().Add(-time.Minute)
	c := NewClock(f, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if d := c.Offset(); d > -59*time.Second {
		t.Errorf("Offset after Run = %v, want about −1m", d)
	}
}
