package postgres_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/tetherq/tether/store"
	"github.com/tetherq/tether/store/postgres"
	"github.com/tetherq/tether/store/storetest"
)

// notifyTimeout bounds a wake-up through LISTEN/NOTIFY. The issue asks
// for one replica to wake another within a second; the notification takes
// milliseconds, so a second is already generous.
const notifyTimeout = time.Second

// wantWoken fails unless ch closes within d.
func wantWoken(t *testing.T, what string, ch <-chan struct{}, d time.Duration) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: no wake-up within %s", what, d)
	}
}

// connected fails unless s's listener is connected, so a wake-up it
// delivers comes from a notification and not from the poll fallback.
func connected(t *testing.T, s *postgres.Store) uint32 {
	t.Helper()
	pid := s.ListenerPIDForTest()
	if pid == 0 {
		t.Fatal("listener not connected after Open")
	}
	return pid
}

// An enqueue on one replica wakes a long-poll waiting on another.
func TestWakeupAcrossReplicas(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	connected(t, b)
	for i := range 3 {
		ch := b.LeaseWakeup([]string{store.DefaultQueue}).C()
		start := time.Now()
		enqueueN(t, a, store.DefaultQueue, 1, storetest.Base)
		wantWoken(t, "enqueue on replica A, waiting on B", ch, notifyTimeout)
		t.Logf("round %d: woken after %s", i, time.Since(start))
	}
}

// Stores in separate schemas of one database listen on separate
// channels, so they never wake each other (the contract suite's quiet
// wake-up test relies on it: its stores share the database).
func TestWakeupChannelPerSchema(t *testing.T) {
	t.Parallel()
	a, b := open(t), open(t)
	if a.ChannelForTest() == b.ChannelForTest() {
		t.Errorf("two schemas share the channel %q", a.ChannelForTest())
	}
}

// terminateListener kills s's listener backend and waits (on wake-ups,
// not sleeps) until the store has noticed: until its listener pid is no
// longer old, and is new when reconnected is set.
func terminateListener(t *testing.T, s *postgres.Store, old uint32, reconnected bool) {
	t.Helper()
	var killed bool
	if err := s.QueryRowForTest(t.Context(), `SELECT pg_terminate_backend(`+strconv.Itoa(int(old))+`)`, &killed); err != nil || !killed {
		t.Fatalf("terminate the listener backend %d: %v, %v", old, killed, err)
	}
	waitListener(t, s, func(pid uint32) bool { return pid != old && (pid != 0) == reconnected })
}

// waitListener waits until ok holds for s's listener pid. Every wake-up
// (the poll fallback while disconnected, the catch-up signal on reconnect)
// is a moment to look again; the channel is taken before looking, so none
// is missed.
func waitListener(t *testing.T, s *postgres.Store, ok func(pid uint32) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		ch := s.LeaseWakeup([]string{"any"}).C() // the poll and the catch-up wake every queue
		if ok(s.ListenerPIDForTest()) {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("listener pid %d after 30s", s.ListenerPIDForTest())
		}
	}
}

// While the listener is down, the poll fallback wakes long-polls about
// once a second, so a job enqueued on another replica is still found.
func TestListenerPollFallback(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	b.RefuseListenForTest(true)
	terminateListener(t, b, connected(t, b), false)
	ch := b.LeaseWakeup([]string{store.DefaultQueue}).C()
	enqueueN(t, a, store.DefaultQueue, 1, storetest.Base)
	wantWoken(t, "enqueue while the listener is down", ch, 3*time.Second)
	b.RefuseListenForTest(false)
	waitListener(t, b, func(pid uint32) bool { return pid != 0 })
}

// When the listener connection dies, the store reconnects and keeps
// delivering wake-ups; in between, the poll fallback wakes leasers.
func TestListenerReconnects(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	terminateListener(t, b, connected(t, b), true)
	pid := b.ListenerPIDForTest()
	ch := b.LeaseWakeup([]string{store.DefaultQueue}).C()
	enqueueN(t, a, store.DefaultQueue, 1, storetest.Base)
	wantWoken(t, "enqueue after the listener reconnected", ch, notifyTimeout)
	if got := b.ListenerPIDForTest(); got != pid {
		t.Errorf("listener changed from %d to %d during the check; the wake-up may be the poll's", pid, got)
	}
}
