package api

import (
	"testing"
	"time"
)

// TestAuthThrottleForgetsLeastRecent: the throttle remembers a bounded
// number of addresses; past it, the least recently seen one is forgotten
// (its failures with it), and one seen again is kept.
func TestAuthThrottleForgetsLeastRecent(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	th := NewAuthThrottle(1, time.Hour)
	th.max = 2
	fail := func(addr string) bool {
		_, ok := th.Try(addr, "", now)
		return ok
	}
	for _, addr := range []string{"192.0.2.1:1", "192.0.2.2:1"} {
		if !fail(addr) || fail(addr) {
			t.Fatalf("%s: want one failure, then throttled", addr)
		}
	}
	fail("192.0.2.1:1") // seen again: now the most recent
	fail("192.0.2.3:1") // forgets 192.0.2.2
	if len(th.clients) != 2 || th.recent.Len() != 2 {
		t.Errorf("remembers %d addresses (%d in order), want 2", len(th.clients), th.recent.Len())
	}
	if !fail("192.0.2.2:1") {
		t.Error("a forgotten address is still throttled")
	}
	if fail("192.0.2.3:1") {
		t.Error("a remembered address lost its failures")
	}
}

// TestAuthThrottleOff: no failures allowed means no throttle.
func TestAuthThrottleOff(t *testing.T) {
	t.Parallel()
	th := NewAuthThrottle(0, time.Minute)
	for range 100 {
		if _, ok := th.Try("192.0.2.1:1", "", time.Now()); !ok {
			t.Fatal("a disabled throttle refused")
		}
	}
	if len(th.clients) != 0 {
		t.Errorf("a disabled throttle remembers %d addresses", len(th.clients))
	}
}
